export type ScheduleField = "spec.schedule" | "spec.timeZone";

/**
 * A rejected schedule or time zone, shaped like an apimachinery field.Invalid error so the controller can put
 * `message` into events and conditions unchanged and users see the same wording `kubectl apply` would give.
 */
export class ScheduleError extends Error {
  readonly field: ScheduleField;
  readonly value: string;
  readonly reason: string;

  constructor(field: ScheduleField, value: string, reason: string) {
    super(`${field}: Invalid value: ${JSON.stringify(value)}: ${reason}`);
    this.name = "ScheduleError";
    this.field = field;
    this.value = value;
    this.reason = reason;
  }
}
