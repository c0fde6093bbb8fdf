// spec.jitter: each slot's run starts at its slot plus an offset in [0, jitter), the same on every replica and after
// every restart because it is decided from the CronJob's namespace and name and the slot (a hash, as H is), never
// drawn at random. The Job keeps its slot's name (the lock that makes a run happen once) and says its offset. The
// controller's due slots (controllers/due.ts), `kubectl cron next` and `why` all ask here. Pure.
import { createHash } from "node:crypto";
import { type FieldError, invalidField } from "../../runtime/field.ts";
import { documentedKey } from "./metadata.ts";
import { GROUP } from "./groupversion_info.ts";
import { formatGoSeconds, type HashKey, parseGoDuration } from "./schedule/index.ts";

/** The longest spec.jitter accepted as text. */
export const MAX_JITTER_LENGTH = 32;

/** On a Job of a jittered slot: how long after its slot it was due to start. */
export const JITTER_OFFSET_ANNOTATION = documentedKey(`${GROUP}/jitter-offset`, () => ({
  on: "Job of a slot of a CronJob with `spec.jitter`",
  setBy: "the controller",
  format: 'a Go duration in whole seconds, `"37s"`, `"1m5s"`',
  meaning:
    "The slot's offset: its run was due at its scheduled time plus this (the same on every replica and after every " +
    "restart: hashed from the CronJob's namespace, name and the slot). `kubectl cron history` and `why` show it.",
}));

/**
 * spec.jitter in whole seconds, or an error naming the field and the value. Admission (`strict`) refuses a fraction
 * of a second; a value stored before it did ("1.5s") reads as its whole seconds, so its CronJob keeps its jitter.
 */
export function parseJitter(
  value: unknown,
  strict = false,
): { ok: true; seconds: number } | { ok: false; error: FieldError } {
  const bad = (why: string) => ({ ok: false as const, error: invalidField("spec.jitter", value, why) });
  if (typeof value !== "string" || value.length > MAX_JITTER_LENGTH)
    return bad(`must be a Go duration such as "30s" or "5m" (at most ${MAX_JITTER_LENGTH} characters)`);
  const d = parseGoDuration(value);
  if (!d.ok) return bad(`must be a Go duration such as "30s" or "5m": ${d.reason}`);
  if (strict && d.nanoseconds % 1_000_000_000n !== 0n)
    return bad('must be whole seconds, such as "30s" or "1m5s" (offsets are whole seconds)');
  const seconds = Number(d.nanoseconds / 1_000_000_000n);
  if (seconds < 1) return bad("must be at least 1s (offsets are whole seconds)");
  return { ok: true, seconds };
}

/** spec.jitter as stored, in seconds; 0 when unset or not a valid duration (admission refuses those). */
export function jitterSecondsOf(spec: { jitter?: unknown } | undefined): number {
  if (spec?.jitter === undefined) return 0;
  const j = parseJitter(spec.jitter);
  return j.ok ? j.seconds : 0;
}

/**
 * A slot's offset in whole seconds, in [0, jitterSeconds): 4 bytes of sha256("<namespace>/<name>/<slot's unix
 * seconds>") modulo the jitter, so each slot of each CronJob has its own, spread evenly.
 */
export function jitterOffsetSeconds(key: HashKey, slot: Date, jitterSeconds: number): number {
  if (jitterSeconds <= 1) return 0;
  const unix = Math.floor(slot.getTime() / 1000);
  const digest = createHash("sha256").update(`${key.namespace}/${key.name}/${unix}`, "utf8").digest();
  return digest.readUInt32BE(0) % jitterSeconds;
}

/** When a slot's run starts: its slot plus its offset (the slot itself without jitter). */
export function runStartOf(key: HashKey, slot: Date, jitterSeconds: number): Date {
  return new Date(slot.getTime() + jitterOffsetSeconds(key, slot, jitterSeconds) * 1000);
}

/** An offset as the Job's annotation and `kubectl cron` say it ("0s", "37s", "1m5s"). */
export const offsetText = (seconds: number): string => formatGoSeconds(seconds);

/**
 * The admission check of spec.jitter against the schedule: shorter than the shortest time between two slots
 * (`shortestSeconds`), so a slot's run never starts after the next slot and each run stays its slot's own.
 */
export function validateJitter(value: unknown, shortestSeconds: number | undefined): FieldError | undefined {
  if (value === undefined) return undefined;
  const j = parseJitter(value, true);
  if (!j.ok) return j.error;
  if (shortestSeconds === undefined || !(j.seconds >= shortestSeconds)) return undefined;
  return invalidField(
    "spec.jitter",
    value,
    `must be shorter than the ${formatGoSeconds(shortestSeconds)} between the schedule's closest slots (each slot's run starts before the next slot)`,
  );
}

/** The offset a Job's annotation says its run started after its slot, in seconds (undefined: none). */
export function jitterOffsetOf(job: { metadata?: { annotations?: Record<string, string> } }): number | undefined {
  const v = job.metadata?.annotations?.[JITTER_OFFSET_ANNOTATION];
  if (v === undefined) return undefined;
  const d = parseGoDuration(v);
  return d.ok && d.nanoseconds >= 0n ? Number(d.nanoseconds / 1_000_000_000n) : undefined;
}

/**
 * The Job with its slot's offset said: every jittered slot's, 0 included (else an offset of 0 looks like no jitter);
 * undefined (not jittered): none.
 */
export function withJitterOffset<J extends { metadata?: { annotations?: Record<string, string> } }>(
  job: J,
  seconds: number | undefined,
): J {
  if (seconds === undefined) return job;
  const annotations = { ...job.metadata?.annotations, [JITTER_OFFSET_ANNOTATION]: offsetText(seconds) };
  return { ...job, metadata: { ...job.metadata, annotations } };
}
