// Hashed schedule fields, Jenkins' "H": an extension the built-in CronJob does not have. Thousands of
// CronJobs on "0 * * * *" all fire in the same second; "H * * * *" runs each of them at a minute of its own,
// hashed from its namespace and name. Resolution only rewrites the H fields into plain cron text, which then
// goes through the unchanged Kubernetes grammar (parseSchedule): a schedule without H is returned as it is.
//
// Forms, in a field of their own (not in a list): H, H/n, H(a-b), H(a-b)/n.
//   H         one value in the field's hash range: lo + hash mod (hi-lo+1)
//   H/n       every n from lo + hash mod n up to hi, written "start-hi/n" (minute H/15 → e.g. "7-59/15")
//   H(a-b)    a + hash mod (b-a+1); a and b within the field's range
//   H(a-b)/n  every n from a + hash mod n up to b, written "start-b/n" (n at most b-a+1)
// Hash ranges (Jenkins'): minute 0-59, hour 0-23, day-of-month 1-28 (every month has it), month 1-12,
// day-of-week 0-6. hash = the field's own 4 bytes (big-endian, unsigned) of sha256("<namespace>/<name>"):
// bytes 0-3 for minute, 4-7 hour, 8-11 day-of-month, 12-15 month, 16-19 day-of-week. A pure function of
// namespace/name: the same on every replica, after every restart, in the webhook, the controller and the
// kubectl plugin; the fields are independent of each other.

import { createHash } from "node:crypto";
import { ScheduleError } from "./errors.ts";
import { GO_SPACE } from "./grammar.ts";
import { parseSchedule, type Schedule } from "./schedule.ts";

/** What H is hashed from: the CronJob's namespace and name. */
export interface HashKey {
  readonly namespace: string;
  readonly name: string;
}

type ResolveHashedResult = { ok: true; resolved: string; hashed: boolean } | { ok: false; error: ScheduleError };

type ParseHashedScheduleResult =
  { ok: true; schedule: Schedule; resolved: string; hashed: boolean } | { ok: false; error: ScheduleError };

interface HashField {
  readonly name: string;
  /** The range H(a-b) must lie within (the grammar's). */
  readonly min: number;
  readonly max: number;
  /** The range H and H/n spread over (Jenkins'). */
  readonly hashMin: number;
  readonly hashMax: number;
}

/** Per field: the range H(a-b) must lie within, and the range H and H/n spread over. */
export const HASH_FIELDS: readonly HashField[] = [
  { name: "minute", min: 0, max: 59, hashMin: 0, hashMax: 59 },
  { name: "hour", min: 0, max: 23, hashMin: 0, hashMax: 23 },
  { name: "day-of-month", min: 1, max: 31, hashMin: 1, hashMax: 28 },
  { name: "month", min: 1, max: 12, hashMin: 1, hashMax: 12 },
  { name: "day-of-week", min: 0, max: 6, hashMin: 0, hashMax: 6 },
];

const FORMS = "H, H/n, H(a-b) or H(a-b)/n";
const HASHED = /^H(?:\(([0-9]+)-([0-9]+)\))?(?:\/([0-9]+))?$/;

/** An H item after checking: the values lo..hi, one of them (no step) or every `step` from a hashed start. */
interface HashedItem {
  readonly lo: number;
  readonly hi: number;
  readonly step: number | undefined;
}

/** A list item that tries to be H: a piece (between "-" and "/") that is H or h, or starts with "H(" / "h(". */
function hashedLike(item: string): boolean {
  return item.split(/[-/]/).some((piece) => /^[Hh](\(|$)/.test(piece));
}

function listItems(token: string): string[] {
  // As in the grammar: empty list items are dropped ("1,,2" is "1,2").
  return token.split(",").filter((item) => item !== "");
}

function checkItem(field: HashField, item: string): { ok: true; item: HashedItem } | { ok: false; reason: string } {
  const m = HASHED.exec(item);
  if (!m) {
    if (item.startsWith("h") && HASHED.test(`H${item.slice(1)}`)) {
      return { ok: false, reason: `${field.name} ${item}: write H in upper case (H${item.slice(1)})` };
    }
    return {
      ok: false,
      reason: `${field.name} ${item}: not a hashed value; the forms are ${FORMS} with whole numbers, alone in the field`,
    };
  }
  let lo = field.hashMin;
  let hi = field.hashMax;
  if (m[1] !== undefined && m[2] !== undefined) {
    lo = Number(m[1]);
    hi = Number(m[2]);
    if (lo < field.min || hi < field.min || lo > field.max || hi > field.max) {
      return { ok: false, reason: `${field.name} ${item}: range must lie within ${field.min}-${field.max}` };
    }
    if (lo > hi) {
      return { ok: false, reason: `${field.name} ${item}: range is reversed (${lo} > ${hi}); write it as H(low-high)` };
    }
  }
  if (m[3] === undefined) return { ok: true, item: { lo, hi, step: undefined } };
  const step = Number(m[3]);
  const size = hi - lo + 1;
  if (step < 1) return { ok: false, reason: `${field.name} ${item}: step must be at least 1` };
  if (step > size) {
    return {
      ok: false,
      reason: `${field.name} ${item}: step must be at most ${size}, the number of values in ${lo}-${hi}`,
    };
  }
  return { ok: true, item: { lo, hi, step } };
}

/** The five fields' hashes of a key: 4 bytes each of sha256("<namespace>/<name>"). */
export function scheduleHashes(key: HashKey): number[] {
  const digest = createHash("sha256").update(`${key.namespace}/${key.name}`, "utf8").digest();
  return HASH_FIELDS.map((_, i) => digest.readUInt32BE(4 * i));
}

function render(item: HashedItem, hash: number): string {
  if (item.step === undefined) return String(item.lo + (hash % (item.hi - item.lo + 1)));
  return `${item.lo + (hash % item.step)}-${item.hi}/${item.step}`;
}

/**
 * Rewrites the H fields of a five-field schedule into values hashed from `key`, giving Kubernetes cron
 * text (fields separated by single spaces) for parseSchedule. A schedule without H comes back unchanged,
 * `hashed: false`, also when it is invalid (parseSchedule reports that). Refused, with the field and item:
 * a malformed or lower-case H, H in a list, a range outside the field or reversed, a step of 0 or larger
 * than its range, H in a descriptor, and H when the key has no namespace or name. Never throws.
 */
export function resolveHashedSchedule(schedule: string, key: HashKey): ResolveHashedResult {
  const unchanged: ResolveHashedResult = { ok: true, resolved: schedule, hashed: false };
  if (typeof schedule !== "string") return unchanged;
  // Every H form starts with H or h (hashedLike): without either letter there is nothing to resolve or refuse, and
  // most schedules are read this way (a fleet's why -A resolves each CronJob's).
  if (!/[Hh]/.test(schedule)) return unchanged;
  const fail = (reason: string): ResolveHashedResult => ({
    ok: false,
    error: new ScheduleError("spec.schedule", schedule, reason),
  });
  // TZ= prefixes are the grammar's to refuse.
  if (/^\s*(CRON_)?TZ=/.test(schedule)) return unchanged;
  const tokens = schedule.split(GO_SPACE).filter((t) => t !== "");
  if (schedule.startsWith("@")) {
    if (tokens.some((t) => listItems(t).some(hashedLike))) {
      return fail(
        `H cannot be used in a descriptor (@hourly, @every … keep Kubernetes' meaning); write five fields instead, e.g. "H * * * *" for hourly at a hashed minute`,
      );
    }
    return unchanged;
  }
  // Another number of fields is the grammar's to refuse.
  if (tokens.length !== HASH_FIELDS.length) return unchanged;

  const items: Array<HashedItem | undefined> = [];
  for (const [i, field] of HASH_FIELDS.entries()) {
    const token = tokens[i] ?? "";
    const list = listItems(token);
    if (!list.some(hashedLike)) {
      items.push(undefined);
      continue;
    }
    if (list.length > 1) {
      return fail(`${field.name} ${token}: H cannot be part of a list; use ${FORMS} alone in the field`);
    }
    const checked = checkItem(field, list[0] ?? "");
    if (!checked.ok) return fail(checked.reason);
    items.push(checked.item);
  }
  if (items.every((item) => item === undefined)) return unchanged;

  const namespace = typeof key?.namespace === "string" ? key.namespace : "";
  const name = typeof key?.name === "string" ? key.name : "";
  if (name === "") {
    return fail(
      "H needs a fixed metadata.name: the value is hashed from the CronJob's namespace and name, and with only metadata.generateName there is no name yet",
    );
  }
  if (namespace === "") {
    return fail("H needs the CronJob's namespace: the value is hashed from the CronJob's namespace and name");
  }
  const hashes = scheduleHashes({ namespace, name });
  const resolved = tokens.map((t, i) => {
    const item = items[i];
    return item === undefined ? t : render(item, hashes[i] ?? 0);
  });
  return { ok: true, resolved: resolved.join(" "), hashed: true };
}

/**
 * resolveHashedSchedule, then parseSchedule on the result: what the controller, the webhook and the kubectl
 * plugin use. Errors quote spec.schedule as written; when the resolved text is what is wrong (e.g.
 * "0 0 H(29-31) 2 *" resolving to a day February never has), the reason says what it resolved to.
 */
export function parseHashedSchedule(schedule: string, key: HashKey, timeZone?: string): ParseHashedScheduleResult {
  const r = resolveHashedSchedule(schedule, key);
  if (!r.ok) return r;
  const parsed = parseSchedule(r.resolved, timeZone);
  if (parsed.ok) return { ok: true, schedule: parsed.schedule, resolved: r.resolved, hashed: r.hashed };
  if (!r.hashed || parsed.error.field !== "spec.schedule") return parsed;
  return {
    ok: false,
    error: new ScheduleError(
      "spec.schedule",
      schedule,
      `runs as ${JSON.stringify(r.resolved)} for this CronJob (H is hashed from namespace/name): ${parsed.error.reason}`,
    ),
  };
}
