// Writes one entry of a zip archive to a file: `node hack/helm/unzip-entry.ts ARCHIVE ENTRY OUT`.
// hack/setup-helm takes helm out of a zip, and neither `unzip` nor python is on a fresh CI machine; the
// project's Node is. Only what that archive needs: stored or deflated entries, no zip64, no encryption.
import { closeSync, openSync, readFileSync, writeFileSync } from "node:fs";
import { inflateRawSync } from "node:zlib";

const EOCD_SIGNATURE = 0x06054b50;
const CENTRAL_SIGNATURE = 0x02014b50;
const LOCAL_SIGNATURE = 0x04034b50;

export function readZipEntry(zip: Buffer, name: string, archive = "archive"): Buffer {
  // The end-of-central-directory record is in the last 22 + 65535 (comment) bytes.
  let eocd = -1;
  for (let i = zip.length - 22; i >= Math.max(0, zip.length - 22 - 0xffff); i--) {
    if (zip.readUInt32LE(i) === EOCD_SIGNATURE) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) throw new Error(`${archive}: not a zip archive (no end of central directory)`);
  const entries = zip.readUInt16LE(eocd + 10);
  let p = zip.readUInt32LE(eocd + 16);
  const names: string[] = [];
  for (let n = 0; n < entries; n++) {
    if (zip.readUInt32LE(p) !== CENTRAL_SIGNATURE) throw new Error(`${archive}: corrupt central directory at ${p}`);
    const method = zip.readUInt16LE(p + 10);
    const compressed = zip.readUInt32LE(p + 20);
    const size = zip.readUInt32LE(p + 24);
    const nameLen = zip.readUInt16LE(p + 28);
    const extraLen = zip.readUInt16LE(p + 30);
    const commentLen = zip.readUInt16LE(p + 32);
    const local = zip.readUInt32LE(p + 42);
    const entryName = zip.toString("utf8", p + 46, p + 46 + nameLen);
    names.push(entryName);
    p += 46 + nameLen + extraLen + commentLen;
    if (entryName !== name) continue;
    if (zip.readUInt32LE(local) !== LOCAL_SIGNATURE) throw new Error(`${archive}: corrupt local header of ${name}`);
    const start = local + 30 + zip.readUInt16LE(local + 26) + zip.readUInt16LE(local + 28);
    const raw = zip.subarray(start, start + compressed);
    let data: Buffer;
    if (method === 0) data = Buffer.from(raw);
    else if (method === 8) data = inflateRawSync(raw);
    else throw new Error(`${archive}: ${name} uses compression method ${method} (only stored and deflate are read)`);
    if (data.length !== size)
      throw new Error(`${archive}: ${name} is ${data.length} bytes, the directory says ${size}`);
    return data;
  }
  throw new Error(`${archive}: no entry ${name} (entries: ${names.join(", ")})`);
}

if (import.meta.main) {
  const [archive, entry, out] = process.argv.slice(2);
  if (!archive || !entry || !out) {
    console.error("usage: node hack/helm/unzip-entry.ts ARCHIVE ENTRY OUT");
    process.exit(2);
  }
  try {
    const data = readZipEntry(readFileSync(archive), entry, archive);
    const fd = openSync(out, "w", 0o755);
    writeFileSync(fd, data);
    closeSync(fd);
  } catch (err) {
    console.error(`unzip-entry: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  }
}
