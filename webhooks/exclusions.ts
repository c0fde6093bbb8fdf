// The webhook's check of spec.exclusions: its own windows must parse (each error names the window's field and
// value), and they must leave the schedule a slot: exclusions that leave none ever are refused, as a schedule that
// never fires is; none in the next year is a warning. A named calendar is not read here (it may be applied after
// the CronJob): the controller holds the slots while it is missing, and says so.
import type { CronJobSchedules } from "../api/v1/index.ts";
import { Exclusions, parseExclusionWindows, slotsLeft } from "../api/v1/schedule/index.ts";
import { type FieldError, invalidField } from "../runtime/field.ts";
import { isObj } from "../runtime/objects.ts";

/** The reason part of an exclusions error (its message is the whole apimachinery-style line). */
function reasonOf(e: { field: string; value: unknown; message: string }): string {
  const prefix = `${e.field}: Invalid value: ${JSON.stringify(e.value)}: `;
  return e.message.startsWith(prefix) ? e.message.slice(prefix.length) : e.message;
}

export function validateExclusions(
  exclusions: unknown,
  schedules: CronJobSchedules | undefined,
  now: Date,
): { errors: FieldError[]; warnings: string[] } {
  if (!isObj(exclusions) || exclusions.windows === undefined) return { errors: [], warnings: [] };
  const parsed = parseExclusionWindows(exclusions.windows, "spec.exclusions.windows");
  if (!parsed.ok) {
    return { errors: parsed.errors.map((e) => invalidField(e.field, e.value, reasonOf(e))), warnings: [] };
  }
  if (!schedules || parsed.windows.length === 0) return { errors: [], warnings: [] };
  const own = new Exclusions([{ by: "spec.exclusions", windows: parsed.windows }]);
  // Several schedules: a slot is left when any of them keeps one (each reads the windows in its own zone).
  const left = schedules.written.set.members.map((m) => slotsLeft(m.schedule, own, now));
  if (left.includes("ok")) return { errors: [], warnings: [] };
  if (left.every((l) => l === "never"))
    return {
      errors: [
        invalidField(
          "spec.exclusions.windows",
          exclusions.windows,
          "leave the schedule no time to run: every scheduled time falls in a window",
        ),
      ],
      warnings: [],
    };
  return {
    errors: [],
    warnings: [
      "spec.exclusions.windows: leave the schedule no time to run in the next year: every scheduled time until then falls in a window",
    ],
  };
}
