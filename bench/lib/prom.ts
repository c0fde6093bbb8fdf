// Prometheus text exposition: a small parser and a scraper (plain HTTP, or HTTPS with a CA or without
// verification, and an optional bearer token). Enough to read counters and gauges off the apiserver,
// kube-controller-manager and the operator.
import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export type LabelMatch = Record<string, string> | ((labels: Record<string, string>) => boolean);

/** Parse the text format (comments and blank lines skipped, timestamps ignored). */
export function parseProm(text: string): Sample[] {
  const out: Sample[] = [];
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (!line || line.startsWith("#")) continue;
    const s = parseLine(line);
    if (s) out.push(s);
  }
  return out;
}

function parseLine(line: string): Sample | undefined {
  let i = 0;
  while (i < line.length && line[i] !== "{" && line[i] !== " " && line[i] !== "\t") i++;
  const name = line.slice(0, i);
  const labels: Record<string, string> = {};
  if (line[i] === "{") {
    i++;
    for (;;) {
      while (line[i] === " " || line[i] === ",") i++;
      if (i >= line.length) return undefined;
      if (line[i] === "}") {
        i++;
        break;
      }
      const eq = line.indexOf("=", i);
      if (eq < 0 || line[eq + 1] !== '"') return undefined;
      const key = line.slice(i, eq).trim();
      let j = eq + 2;
      let val = "";
      while (j < line.length && line[j] !== '"') {
        if (line[j] === "\\" && j + 1 < line.length) {
          const c = line[j + 1];
          val += c === "n" ? "\n" : c;
          j += 2;
        } else {
          val += line[j];
          j++;
        }
      }
      labels[key] = val;
      i = j + 1;
    }
  }
  const rest = line.slice(i).trim().split(/\s+/);
  const value = parseValue(rest[0] ?? "");
  if (!name || value === undefined) return undefined;
  return { name, labels, value };
}

function parseValue(v: string): number | undefined {
  if (v === "+Inf") return Infinity;
  if (v === "-Inf") return -Infinity;
  if (v === "NaN") return NaN;
  const n = Number(v);
  return v === "" || Number.isNaN(n) ? undefined : n;
}

function matches(labels: Record<string, string>, m: LabelMatch | undefined): boolean {
  if (!m) return true;
  if (typeof m === "function") return m(labels);
  return Object.entries(m).every(([k, v]) => labels[k] === v);
}

/** Sum of every series of `name` whose labels match. */
export function sumOf(samples: Sample[], name: string, m?: LabelMatch): number {
  let total = 0;
  for (const s of samples) if (s.name === name && matches(s.labels, m) && Number.isFinite(s.value)) total += s.value;
  return total;
}

/** Whether any series of `name` exists. */
export function has(samples: Sample[], name: string, m?: LabelMatch): boolean {
  return samples.some((s) => s.name === name && matches(s.labels, m));
}

/** Sum of `name` grouped by the key `keyOf` builds from the labels. */
export function groupBy(
  samples: Sample[],
  name: string,
  keyOf: (labels: Record<string, string>) => string | undefined,
): Map<string, number> {
  const out = new Map<string, number>();
  for (const s of samples) {
    if (s.name !== name || !Number.isFinite(s.value)) continue;
    const k = keyOf(s.labels);
    if (k === undefined) continue;
    out.set(k, (out.get(k) ?? 0) + s.value);
  }
  return out;
}

/** b − a per key (keys missing in `a` count from 0). */
export function delta(a: Map<string, number>, b: Map<string, number>): Map<string, number> {
  const out = new Map<string, number>();
  for (const [k, v] of b) {
    const d = v - (a.get(k) ?? 0);
    if (d !== 0) out.set(k, d);
  }
  return out;
}

export interface ScrapeOptions {
  token?: string;
  ca?: string | Buffer;
  /** Skip TLS verification (throwaway self-signed serving certificates). */
  insecure?: boolean;
  timeoutMs?: number;
}

/** GET a /metrics URL and parse it. */
export function scrape(url: string, o: ScrapeOptions = {}): Promise<Sample[]> {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const headers: Record<string, string> = { accept: "text/plain" };
    if (o.token) headers.authorization = `Bearer ${o.token}`;
    const opts = { method: "GET", headers, timeout: o.timeoutMs ?? 10_000 };
    const req =
      u.protocol === "https:"
        ? httpsRequest(u, { ...opts, ...(o.ca ? { ca: o.ca } : {}), rejectUnauthorized: !o.insecure })
        : httpRequest(u, opts);
    req.on("response", (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => {
        const body = Buffer.concat(chunks).toString("utf8");
        if ((res.statusCode ?? 0) !== 200)
          reject(new Error(`GET ${url}: HTTP ${res.statusCode}: ${body.slice(0, 200)}`));
        else resolve(parseProm(body));
      });
      res.on("error", reject);
    });
    req.on("timeout", () => req.destroy(new Error(`GET ${url}: timed out`)));
    req.on("error", reject);
    req.end();
  });
}
