type ScheduleField = "spec.schedule" | "spec.timeZone";

/**
 * A rejected schedule or time zone, shaped like an apimachinery field.Invalid error so the controller can put
 * `message` into events and conditions unchanged and users see the same wording `kubectl apply` would give.
 */
export class ScheduleError extends Error {
  readonly field: ScheduleField;
  readonly value: string;
  readonly reason: string;

  constructor(field: ScheduleField, value: string, reason: string) {
    // The value and the reason (which may quote parts of it) are bounded: the message goes into
    // conditions and Events, and a schedule stored with admission bypassed can be any size.
    super(`${field}: Invalid value: ${JSON.stringify(cut(value, MAX_QUOTED_VALUE))}: ${cut(reason, MAX_REASON)}`);
    this.name = "ScheduleError";
    this.field = field;
    this.value = value;
    this.reason = reason;
  }
}

/** Longest user value quoted in a message, and longest reason. */
const MAX_QUOTED_VALUE = 256;
const MAX_REASON = 512;

function cut(s: string, max: number): string {
  return s.length <= max ? s : `${s.slice(0, max)}… (${s.length - max} more characters)`;
}
