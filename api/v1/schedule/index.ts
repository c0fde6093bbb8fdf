export { ScheduleError } from "./errors.ts";
export { parseScheduleSpec, type CronFields } from "./grammar.ts";
export { isSlot, NO_SLOT, parseSchedule, type Schedule } from "./schedule.ts";
export { NoSchedule, type SlotWindow, WindowedSchedule } from "./limited.ts";
export { HASH_FIELDS, parseHashedSchedule, resolveHashedSchedule, scheduleHashes, type HashKey } from "./hashed.ts";
export { utcOffsetAt, validateTimeZone, ZoneRules } from "./timezone.ts";
export {
  countSlots,
  countText,
  MISSED_COUNT_CAP,
  newestSlots,
  scheduleWindow,
  SLOT_COUNT_LIMIT,
  slotsInRange,
  TOO_MANY_MISSED,
} from "./window.ts";
export { MAX_SCHEDULE_LENGTH, MAX_SCHEDULES, MAX_TIME_ZONE_LENGTH, parseScheduleList } from "./list.ts";
export {
  ScheduleSet,
  type ScheduleSetMember,
  type SetAnchor,
  type SourcedSlot,
  unionCountSlots,
  UnionSchedule,
} from "./union.ts";
export type { CompiledWindow } from "./compiledwindows.ts";
export { MAX_EXCLUSION_WINDOWS, parseExclusionWindows } from "./exclusionwindows.ts";
export {
  ExcludingSchedule,
  type ExclusionHit,
  type ExclusionSource,
  Exclusions,
  MAX_SKIPPED_SLOTS,
  slotsLeft,
} from "./excludingschedule.ts";
export { formatGoSeconds, parseGoDuration } from "./duration.ts";
