// What the schedule tests (test/unit/schedule*.test.ts) share: a schedule parsed or the test failed, the slots of a
// range as countSlots counts them, a schedule that counts the calls made on it, and a union's slots with their
// sources.
import assert from "node:assert/strict";
import {
  countSlots,
  parseSchedule,
  type Schedule,
  type SetAnchor,
  type SourcedSlot,
  type UnionSchedule,
} from "../api/v1/schedule/index.ts";

/** `schedule` in `timeZone`, parsed; the test fails with the parser's message if it does not parse. */
export function must(schedule: string, timeZone?: string): Schedule {
  const r = parseSchedule(schedule, timeZone);
  assert.ok(r.ok, r.ok ? "" : r.error.message);
  return r.schedule;
}

/** The slots in [from, to], as countSlots counts them (its lower bound is exclusive). */
export const countInRange = (s: Parameters<typeof countSlots>[0], from: Date, to: Date, anchor: Date | undefined) =>
  countSlots(s, new Date(from.getTime() - 1), to, anchor);

/** A schedule that counts the next/mostRecent calls made on it. */
export function counted(s: Schedule): { schedule: Schedule; calls: () => number } {
  let calls = 0;
  const schedule: Schedule = {
    description: s.description,
    timeZone: s.timeZone,
    isEvery: s.isEvery,
    everySeconds: s.everySeconds,
    followsRealTime: s.followsRealTime,
    next: (after, anchor) => (calls++, s.next(after, anchor)),
    mostRecent: (notAfter, anchor) => (calls++, s.mostRecent(notAfter, anchor)),
  };
  return { schedule, calls: () => calls };
}

/** Each slot with the members the product names for it (UnionSchedule.sourcesAt). */
export const sourced = (union: UnionSchedule, slots: Date[], anchor?: SetAnchor): SourcedSlot[] =>
  slots.map((at) => ({ at, sources: union.sourcesAt(at, anchor) }));
