// Validation of a list of schedules (API v2's spec.schedules: [{schedule, timeZone?}, …]) into a ScheduleSet.
// Each member goes through the single-schedule path unchanged (validateTimeZone, parseHashedSchedule: the
// Kubernetes grammar, H, @every); what is new is where an error points (spec.schedules[2].schedule), the list's
// bounds (its length, each member's length) and duplicates. Errors are field errors (runtime/field.ts), the shape the rest of the API package
// validates with, so the webhook answers them the way it answers v1's.

import { type FieldError, invalidField, requiredField, tooLongField } from "../../../runtime/field.ts";
import { isObj } from "../../../runtime/objects.ts";
import type { ScheduleError } from "./errors.ts";
import { parseScheduleSpec } from "./grammar.ts";
import { type HashKey, parseHashedSchedule } from "./hashed.ts";
import { validateTimeZone } from "./timezone.ts";
import { ScheduleSet, type ScheduleSetMember } from "./union.ts";

/**
 * At most this many schedules in one CronJob. Why 16: what a list is for (weekdays and weekends at different
 * times, the same local time in a few offices' zones, a few irregular times) takes a handful, and one cron
 * expression's lists and ranges already say any set of times in one zone. Every member is paid for on every
 * pass: the union asks each member for its next and its newest slot, and walking n slots of the union costs up to
 * n next() calls per member. Counting a range to SLOT_COUNT_LIMIT takes about 1 s for one schedule that fires
 * every minute, and up to 16 times that when all 16 members fire at the same instants ("* * * * *" in 16 zones;
 * 14 s measured); members at different times cost about what one schedule does. An admission check that only
 * needs "more than MAX_BACKFILL_SLOTS?" should count with that limit, not SLOT_COUNT_LIMIT. A Job's sources stay
 * short enough to quote in an Event or an annotation.
 */
export const MAX_SCHEDULES = 16;
/**
 * Longest schedule (spec.schedule, and each of a list). A schedule that lists every minute, hour and day of the
 * month and every month and weekday by name, without repeating one, has 391 characters; 1024 leaves room for that
 * (and for redundant lists) and refuses only garbage.
 */
export const MAX_SCHEDULE_LENGTH = 1024;
/**
 * Longest time zone (spec.timeZone, and each of a list). IANA names are far shorter (the longest,
 * "America/Argentina/ComodRivadavia", has 32 characters); 255, the longest file name on common filesystems,
 * bounds the field without ever refusing a zone.
 */
export const MAX_TIME_ZONE_LENGTH = 255;

type ScheduleListResult =
  { ok: true; set: ScheduleSet; warnings: string[] } | { ok: false; errors: FieldError[]; warnings: string[] };

const ENTRY = '{schedule: "<cron>", timeZone: "<IANA zone>"} (timeZone optional, UTC when unset)';

/** A member's ScheduleError, at the member's own path. */
function atMember(path: string, error: ScheduleError): FieldError {
  const field = error.field === "spec.timeZone" ? "timeZone" : "schedule";
  return invalidField(`${path}.${field}`, error.value, error.reason);
}

/**
 * What makes two members the same schedule: the same values in every field (after H resolution, so "@hourly",
 * "0 * * * *" and a hashed "H * * * *" that resolves to minute 0 are the same), the same DST policy and the same
 * zone (unset is UTC); or the same `@every` interval, whose slots no zone changes. Zone aliases (Etc/UTC) are
 * not unified: a duplicate missed is harmless, since the union merges shared seconds anyway.
 */
function sameScheduleKey(resolved: string, timeZone: string | undefined): string | undefined {
  const spec = parseScheduleSpec(resolved);
  if (!spec.ok) return undefined;
  if (spec.spec.kind === "every") return `@every ${spec.spec.seconds}`;
  return `${JSON.stringify(spec.spec.fields)} in ${timeZone ?? "UTC"}`;
}

/**
 * Validates spec.schedules and builds its ScheduleSet. Reported, each at its path: a missing, empty or non-list
 * value; more than MAX_SCHEDULES entries (alone, as the schema's maxItems would); an entry that is not an object;
 * a schedule or zone longer than the schema allows (`spec.schedules[1].schedule: Too long: …`);
 * a member's schedule or time zone as the single-schedule validation reports it (`spec.schedules[2].schedule:
 * Invalid value: "…": …`); a member that repeats an earlier one (`spec.schedules[3]: Duplicate value: …: the same
 * schedule as spec.schedules[1]`). Warnings as for spec.schedule: an H member's resolved text, an `@every` member
 * under a minute. `key` is what H hashes. Never throws.
 */
export function parseScheduleList(list: unknown, key: HashKey, path = "spec.schedules"): ScheduleListResult {
  const errors: FieldError[] = [];
  const warnings: string[] = [];
  if (list === undefined || list === null) {
    errors.push(requiredField(path, `at least one schedule, each ${ENTRY}`));
    return { ok: false, errors, warnings };
  }
  if (!Array.isArray(list)) {
    errors.push(invalidField(path, list, `must be a list of schedules, each ${ENTRY}`));
    return { ok: false, errors, warnings };
  }
  if (list.length === 0) {
    errors.push(requiredField(path, `at least one schedule, each ${ENTRY}`));
    return { ok: false, errors, warnings };
  }
  if (list.length > MAX_SCHEDULES) {
    errors.push({
      field: path,
      type: "FieldValueTooMany",
      value: list.length,
      detail: `must have at most ${MAX_SCHEDULES} items`,
    });
    return { ok: false, errors, warnings };
  }

  const members: ScheduleSetMember[] = [];
  const seen = new Map<string, number>();
  for (const [index, entry] of (list as unknown[]).entries()) {
    const at = `${path}[${index}]`;
    if (!isObj(entry)) {
      errors.push(invalidField(at, entry, `must be an object: ${ENTRY}`));
      continue;
    }
    const { schedule, timeZone } = entry;
    let zone: string | undefined;
    let zoneOK = true;
    if (timeZone !== undefined) {
      if (typeof timeZone !== "string") {
        errors.push(invalidField(`${at}.timeZone`, timeZone, "must be an IANA time zone name such as Europe/Berlin"));
        zoneOK = false;
      } else if (timeZone.length > MAX_TIME_ZONE_LENGTH) {
        errors.push(tooLongField(`${at}.timeZone`, timeZone, MAX_TIME_ZONE_LENGTH));
        zoneOK = false;
      } else {
        const tzError = validateTimeZone(timeZone);
        if (tzError) {
          errors.push(atMember(at, tzError));
          zoneOK = false;
        } else zone = timeZone;
      }
    }
    if (schedule === undefined || schedule === null || schedule === "") {
      errors.push(requiredField(`${at}.schedule`, 'a schedule in cron format, e.g. "0 * * * *" or "@hourly"'));
      continue;
    }
    if (typeof schedule !== "string") {
      errors.push(invalidField(`${at}.schedule`, schedule, 'must be a string in cron format, e.g. "0 * * * *"'));
      continue;
    }
    if (schedule.length > MAX_SCHEDULE_LENGTH) {
      errors.push(tooLongField(`${at}.schedule`, schedule, MAX_SCHEDULE_LENGTH));
      continue;
    }
    // Without a valid zone the schedule is still checked (in UTC), so both errors are reported at once.
    const parsed = parseHashedSchedule(schedule, key, zone);
    if (!parsed.ok) {
      errors.push(atMember(at, parsed.error));
      continue;
    }
    if (parsed.hashed) {
      warnings.push(
        `${at}.schedule: ${JSON.stringify(schedule)} runs as ${JSON.stringify(parsed.resolved)} for this CronJob (H is hashed from namespace/name; an extension the built-in CronJob does not accept)`,
      );
    }
    if (parsed.schedule.isEvery && (parsed.schedule.everySeconds ?? 60) < 60) {
      warnings.push(
        `${at}.schedule: ${JSON.stringify(schedule)} runs more often than once a minute; each run is a Job (and a Pod): consider a longer interval`,
      );
    }
    if (!zoneOK) continue;

    // One entry repeats none: its key (a parse of its own) is needed only to compare entries.
    const same = list.length > 1 ? sameScheduleKey(parsed.resolved, zone) : undefined;
    const first = same === undefined ? undefined : seen.get(same);
    if (first !== undefined) {
      const earlier = list[first] as Record<string, unknown>;
      const written =
        JSON.stringify(earlier.schedule) + (earlier.timeZone === undefined ? "" : ` in ${earlier.timeZone}`);
      errors.push({
        field: at,
        type: "FieldValueDuplicate",
        value: entry,
        detail: `the same schedule as ${path}[${first}] (${written}): it fires at the same times; remove one`,
      });
      continue;
    }
    if (same !== undefined) seen.set(same, index);
    members.push({ index, text: schedule, schedule: parsed.schedule });
  }
  if (errors.length > 0) return { ok: false, errors, warnings };
  return { ok: true, set: new ScheduleSet(members), warnings };
}
