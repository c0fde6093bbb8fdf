// Kubernetes' protobuf wire format for the two objects the calibration creates — the benchmark's Job and
// an Event like the ones ours writes — to measure what protobuf instead of JSON would save kube-apiserver
// per create (issue 23's protobuf lever). Benchmark-only: it covers exactly the fields these two objects
// use, and the calibration reads every object it wrote back as JSON and compares (protobufMatches), so a
// wrong field number fails the run instead of measuring something else.
//
// The format: the 4 bytes "k8s\0", then a runtime.Unknown {typeMeta {apiVersion, kind}, raw = the object's
// own message}; messages are proto2 (field numbers of k8s.io/api and k8s.io/apimachinery).
import type { KubeObject } from "../../runtime/kinds.ts";

export const PROTOBUF_CONTENT_TYPE = "application/vnd.kubernetes.protobuf";
const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

/** One message being written: fields appended in any order (proto2 allows it), bytes at the end. */
class Writer {
  private readonly parts: Buffer[] = [];

  private varint(v: number | bigint): void {
    let n = BigInt(v);
    if (n < 0n) n += 1n << 64n; // int32/int64 negatives are 10-byte two's complement varints
    const out: number[] = [];
    do {
      let b = Number(n & 0x7fn);
      n >>= 7n;
      if (n > 0n) b |= 0x80;
      out.push(b);
    } while (n > 0n);
    this.parts.push(Buffer.from(out));
  }

  private tag(field: number, wire: 0 | 2): void {
    this.varint((field << 3) | wire);
  }

  int(field: number, v: number | undefined): this {
    if (v === undefined) return this;
    this.tag(field, 0);
    this.varint(v);
    return this;
  }

  bool(field: number, v: boolean | undefined): this {
    return v === undefined ? this : this.int(field, v ? 1 : 0);
  }

  bytes(field: number, v: Buffer | undefined): this {
    if (v === undefined) return this;
    this.tag(field, 2);
    this.varint(v.length);
    this.parts.push(v);
    return this;
  }

  string(field: number, v: string | undefined): this {
    return v === undefined ? this : this.bytes(field, Buffer.from(v, "utf8"));
  }

  strings(field: number, vs: string[] | undefined): this {
    for (const v of vs ?? []) this.string(field, v);
    return this;
  }

  message(field: number, m: Writer | undefined): this {
    return m === undefined ? this : this.bytes(field, m.finish());
  }

  /** map<string, string>: repeated entries {key = 1, value = 2}. */
  map(field: number, m: Record<string, string> | undefined): this {
    for (const [k, v] of Object.entries(m ?? {})) this.message(field, new Writer().string(1, k).string(2, v));
    return this;
  }

  finish(): Buffer {
    return Buffer.concat(this.parts);
  }
}

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj | undefined => (typeof v === "object" && v !== null ? (v as Obj) : undefined);
const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);
const num = (v: unknown): number | undefined => (typeof v === "number" ? v : undefined);
const strMap = (v: unknown): Record<string, string> | undefined => obj(v) as Record<string, string> | undefined;
const strList = (v: unknown): string[] | undefined => (Array.isArray(v) ? (v as string[]) : undefined);

/** meta/v1 Time: {seconds = 1, nanos = 2}, from RFC 3339. */
function time(v: unknown): Writer | undefined {
  const s = str(v);
  if (s === undefined) return undefined;
  const ms = Date.parse(s);
  return new Writer().int(1, Math.floor(ms / 1000)).int(2, (ms % 1000) * 1e6 || undefined);
}

/** meta/v1 ObjectMeta: the fields a create sends. */
function objectMeta(m: Obj | undefined): Writer | undefined {
  if (!m) return undefined;
  return new Writer()
    .string(1, str(m.name))
    .string(2, str(m.generateName))
    .string(3, str(m.namespace))
    .map(11, strMap(m.labels))
    .map(12, strMap(m.annotations));
}

/** core/v1 Container: name = 1, image = 2, command = 3, args = 4. */
function container(c: Obj): Writer {
  return new Writer()
    .string(1, str(c.name))
    .string(2, str(c.image))
    .strings(3, strList(c.command))
    .strings(4, strList(c.args));
}

/** core/v1 PodSpec: containers = 2, restartPolicy = 3. */
function podSpec(s: Obj | undefined): Writer | undefined {
  if (!s) return undefined;
  const w = new Writer();
  for (const c of (s.containers as Obj[] | undefined) ?? []) w.message(2, container(c));
  return w.string(3, str(s.restartPolicy));
}

/** batch/v1 JobSpec: backoffLimit = 7, template = 6 (core/v1 PodTemplateSpec {metadata = 1, spec = 2}). */
function jobSpec(s: Obj | undefined): Writer | undefined {
  if (!s) return undefined;
  const t = obj(s.template);
  return new Writer()
    .int(7, num(s.backoffLimit))
    .message(6, t && new Writer().message(1, objectMeta(obj(t.metadata))).message(2, podSpec(obj(t.spec))));
}

/** core/v1 ObjectReference: kind 1, namespace 2, name 3, uid 4, apiVersion 5, resourceVersion 6, fieldPath 7. */
function objectReference(r: Obj | undefined): Writer | undefined {
  if (!r) return undefined;
  return new Writer()
    .string(1, str(r.kind))
    .string(2, str(r.namespace))
    .string(3, str(r.name))
    .string(4, str(r.uid))
    .string(5, str(r.apiVersion))
    .string(6, str(r.resourceVersion))
    .string(7, str(r.fieldPath));
}

function body(o: KubeObject): Writer {
  const o2 = o as unknown as Obj;
  const meta = objectMeta(obj(o2.metadata));
  if (o.kind === "Job") return new Writer().message(1, meta).message(2, jobSpec(obj(o2.spec)));
  if (o.kind === "Event") {
    const source = obj(o2.source);
    return new Writer()
      .message(1, meta)
      .message(2, objectReference(obj(o2.involvedObject)))
      .string(3, str(o2.reason))
      .string(4, str(o2.message))
      .message(5, source && new Writer().string(1, str(source.component)).string(2, str(source.host)))
      .message(6, time(o2.firstTimestamp))
      .message(7, time(o2.lastTimestamp))
      .int(8, num(o2.count))
      .string(9, str(o2.type))
      .string(14, str(o2.reportingComponent))
      .string(15, str(o2.reportingInstance));
  }
  throw new Error(`bench protobuf: no encoder for kind ${o.kind}`);
}

/** The request body of a create of `o` (a Job or an Event) in protobuf. */
export function encodeProtobuf(o: KubeObject): Buffer {
  const typeMeta = new Writer().string(1, o.apiVersion).string(2, o.kind);
  const unknown = new Writer().message(1, typeMeta).bytes(2, body(o).finish()).string(3, "").string(4, "");
  return Buffer.concat([MAGIC, unknown.finish()]);
}

/**
 * Whether `stored` (read back as JSON) holds what `sent` asked for: every field of `sent` (the encoder's
 * coverage) equal in `stored`, which also holds what the apiserver added (defaults, uid, timestamps).
 * Returns the first path that differs, or undefined.
 */
export function protobufMismatch(sent: unknown, stored: unknown, path = ""): string | undefined {
  if (sent === null || typeof sent !== "object") {
    if (typeof sent === "string" && typeof stored === "string" && /^\d{4}-\d\d-\d\dT/.test(sent)) {
      return Date.parse(sent) === Date.parse(stored) ? undefined : path || "(root)";
    }
    return sent === stored ? undefined : path || "(root)";
  }
  if (stored === null || typeof stored !== "object") return path || "(root)";
  if (Array.isArray(sent) !== Array.isArray(stored)) return path || "(root)";
  if (Array.isArray(sent) && sent.length !== (stored as unknown[]).length) return path || "(root)";
  for (const [k, v] of Object.entries(sent)) {
    const d = protobufMismatch(v, (stored as Obj)[k], `${path}.${k}`);
    if (d) return d;
  }
  return undefined;
}
