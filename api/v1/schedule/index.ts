export { ScheduleError, type ScheduleField } from "./errors.ts";
export { parseGoDuration, formatGoSeconds, type DurationResult } from "./duration.ts";
export { parseScheduleSpec, type CronFields, type ParsedSpec, type SpecResult } from "./grammar.ts";
export { parseSchedule, type ParseScheduleResult, type Schedule } from "./schedule.ts";
export {
  HASH_FIELDS,
  parseHashedSchedule,
  resolveHashedSchedule,
  scheduleHashes,
  type HashKey,
  type ParseHashedScheduleResult,
  type ResolveHashedResult,
} from "./hashed.ts";
export { utcOffsetAt, validateTimeZone, ZoneRules, type Transition } from "./timezone.ts";
export { CronSlots } from "./slots.ts";
export { WallClockCron } from "./wallclock.ts";
export {
  MISSED_COUNT_CAP,
  scheduleWindow,
  TOO_MANY_MISSED,
  type ScheduleWindow,
  type ScheduleWindowInput,
} from "./window.ts";
