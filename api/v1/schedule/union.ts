// The schedule math of a CronJob with several schedules (API v2's spec.schedules): its slots are the union of
// its members' slots. A second two members share is one slot (one Job), and every slot says which members it
// came from. Everything here is a k-way merge over the members' own next/mostRecent chains, so each member
// keeps its own zone, DST policy (slots.ts) and `@every` anchoring, and a one-member set gives exactly what
// the single-schedule functions in window.ts give. Pure: no clock reads; `now` is always an argument.
//
// Cost: a merge step asks each member whose slot was just used for its next one, so visiting n slots of the
// union costs at most n next/mostRecent calls per member (k·n for k members, and n when the members fire at
// different times). Every function that walks slots stops at a cap or a limit, as window.ts' do.

import type { Schedule } from "./schedule.ts";
import { SLOT_COUNT_LIMIT } from "./window.ts";

/** One schedule of a set. */
export interface ScheduleSetMember {
  /** Its position in the list (spec.schedules[index]): what a slot's `sources` name, and what anchors key on. */
  readonly index: number;
  /** The schedule as written (before H resolution), for messages. */
  readonly text: string;
  /** The parsed schedule; its timeZone is the member's zone. */
  readonly schedule: Schedule;
}

/** A slot of the union: the instant, and the members that fire at it (their indexes, ascending). */
export interface SourcedSlot {
  readonly at: Date;
  readonly sources: number[];
}

/**
 * What `@every` members count from (cron members ignore it): one instant for every member (v1's
 * lastScheduleTime ?? creationTimestamp, and what a one-member set needs to match v1), or one per member, keyed
 * by member index. A member a map leaves out has no anchor: as in Schedule.next, it counts from `after`, and
 * mostRecent finds none for it.
 *
 * A single shared anchor taken from the union's last run re-phases an `@every` member whenever another member
 * fires ("@every 1h" anchored at 08:17 fires at 09:17, but at 10:00 if a "0 9 * * *" member ran at 09:00): a
 * caller that wants each member on its own grid passes, per `@every` member, its own newest slot (a slot whose
 * sources include it) or else the creation time, which is the same grid (anchor + k·interval).
 */
export type SetAnchor = Date | ReadonlyMap<number, Date> | undefined;

function anchorOf(anchor: SetAnchor, index: number): Date | undefined {
  if (anchor === undefined || anchor instanceof Date) return anchor;
  return anchor.get(index);
}

/**
 * A non-empty set of schedules, each with its own zone. Slot instants are compared in epoch milliseconds (slots
 * are whole seconds), so members in different zones that fire at the same instant share the slot.
 */
export class ScheduleSet {
  /** Ordered by index. */
  readonly members: readonly ScheduleSetMember[];

  /** Throws a RangeError for an empty list or two members with one index: a caller's bug, not user input. */
  constructor(members: readonly ScheduleSetMember[]) {
    if (members.length === 0) throw new RangeError("ScheduleSet: at least one schedule is needed");
    const sorted = [...members].sort((a, b) => a.index - b.index);
    for (const [i, m] of sorted.entries()) {
      if (!Number.isSafeInteger(m.index) || m.index < 0) {
        throw new RangeError(`ScheduleSet: member index ${m.index} is not a non-negative integer`);
      }
      if (i > 0 && sorted[i - 1]?.index === m.index) {
        throw new RangeError(`ScheduleSet: two members have index ${m.index}`);
      }
    }
    this.members = sorted;
  }

  /** A set of the given schedules, indexed by position, each labelled with its normalised text. */
  static of(schedules: readonly Schedule[]): ScheduleSet {
    return new ScheduleSet(schedules.map((schedule, index) => ({ index, text: schedule.description, schedule })));
  }

  /** The first slot of any member strictly after `after`, with every member that fires at it. */
  next(after: Date, anchor?: SetAnchor): SourcedSlot {
    // slotsAfter never ends: every member always has a next slot.
    return this.slotsAfter(after, anchor).next().value;
  }

  /** The latest slot of any member at or before `notAfter`, with every member that fires at it; undefined if none. */
  mostRecent(notAfter: Date, anchor?: SetAnchor): SourcedSlot | undefined {
    const first = this.slotsBackFrom(notAfter, anchor).next();
    return first.done ? undefined : first.value;
  }

  /**
   * The union's slots strictly after `after`, oldest first, without end: each member's chain is
   * next(after), next(that), … exactly as window.ts walks a single schedule, merged on equal instants.
   */
  *slotsAfter(after: Date, anchor?: SetAnchor): Generator<SourcedSlot, never, undefined> {
    const members = this.members;
    const anchors = members.map((m) => anchorOf(anchor, m.index));
    const heads = members.map((m, i) => m.schedule.next(after, anchors[i]).getTime());
    for (;;) {
      let min = Infinity;
      for (const h of heads) if (h < min) min = h;
      const sources: number[] = [];
      const used: number[] = [];
      for (const [i, h] of heads.entries()) {
        if (h !== min) continue;
        sources.push(members[i]!.index);
        used.push(i);
      }
      yield { at: new Date(min), sources };
      // Advanced only when the consumer asks for more: a caller that stops at a bound pays for nothing beyond it.
      const at = new Date(min);
      for (const i of used) heads[i] = members[i]!.schedule.next(at, anchors[i]).getTime();
    }
  }

  /** The union's slots at or before `notAfter`, newest first, until no member has an earlier one. */
  *slotsBackFrom(notAfter: Date, anchor?: SetAnchor): Generator<SourcedSlot, void, undefined> {
    const members = this.members;
    const anchors = members.map((m) => anchorOf(anchor, m.index));
    const heads = members.map((m, i) => m.schedule.mostRecent(notAfter, anchors[i])?.getTime());
    for (;;) {
      let max = -Infinity;
      for (const h of heads) if (h !== undefined && h > max) max = h;
      if (max === -Infinity) return;
      const sources: number[] = [];
      const used: number[] = [];
      for (const [i, h] of heads.entries()) {
        if (h !== max) continue;
        sources.push(members[i]!.index);
        used.push(i);
      }
      yield { at: new Date(max), sources };
      const before = new Date(max - 1);
      for (const i of used) heads[i] = members[i]!.schedule.mostRecent(before, anchors[i])?.getTime();
    }
  }
}

/**
 * The number of the union's slots in (after, notAfter], a shared second counted once, exact up to `limit`
 * (`exact: false` past it, with `count: limit`): as countSlots, for a set. Visits at most limit + 1 slots of the
 * union.
 */
export function unionCountSlots(
  set: ScheduleSet,
  after: Date,
  notAfter: Date,
  anchor: SetAnchor,
  limit: number = SLOT_COUNT_LIMIT,
): { count: number; exact: boolean } {
  const end = notAfter.getTime();
  if (end <= after.getTime()) return { count: 0, exact: true };
  let count = 0;
  for (const slot of set.slotsAfter(after, anchor)) {
    if (slot.at.getTime() > end) break;
    if (count === limit) return { count, exact: false };
    count++;
  }
  return { count, exact: true };
}

/**
 * A set presented as one Schedule, so the single-schedule functions (window.ts) and the controller's steps run
 * unchanged for the union: next/mostRecent are the union's, and `anchor` is a SetAnchor (one Date for every
 * `@every` member, as Schedule.next takes it). isEvery/everySeconds are set only for a one-member `@every` set:
 * countSlots' closed form counts one grid, never a union of grids. One member gives exactly its own answers.
 */
export class UnionSchedule implements Schedule {
  readonly set: ScheduleSet;
  readonly description: string;
  /** The first member's zone: what a message about the set as a whole names. */
  readonly timeZone: string;
  readonly isEvery: boolean;
  readonly everySeconds: number | undefined;
  readonly followsRealTime: boolean;

  constructor(set: ScheduleSet) {
    this.set = set;
    const schedules = set.members.map((m) => m.schedule);
    const only = schedules.length === 1 ? schedules[0] : undefined;
    this.description = schedules.map((s) => s.description).join("; ");
    this.timeZone = schedules[0]!.timeZone;
    this.isEvery = only?.isEvery ?? false;
    this.everySeconds = only?.everySeconds;
    this.followsRealTime = schedules.every((s) => s.followsRealTime);
  }

  /**
   * The walk the last next() call took: window.ts walks a range as next(after), next(that slot), …, and
   * continuing the same merge asks only the members that fired for their next slot, where a fresh set.next()
   * would ask every member (k times the cost for k members, counting a backfill range to SLOT_COUNT_LIMIT).
   * Its answers are set.next()'s either way.
   */
  #walk: { slots: Generator<SourcedSlot, never, undefined>; at: number; anchor: number | undefined } | undefined;

  next(after: Date, anchor?: Date): Date {
    const anchorMs = anchor?.getTime();
    const walk = this.#walk;
    const slots =
      walk && walk.at === after.getTime() && walk.anchor === anchorMs ? walk.slots : this.set.slotsAfter(after, anchor);
    // A walk that throws (an invalid Date) is over: dropped before it is asked.
    this.#walk = undefined;
    const at = slots.next().value.at;
    this.#walk = { slots, at: at.getTime(), anchor: anchorMs };
    return at;
  }

  mostRecent(notAfter: Date, anchor?: Date): Date | undefined {
    return this.set.mostRecent(notAfter, anchor)?.at;
  }

  /** The members (indexes, ascending) that fire at `slot`; none when it is not a slot of the union. */
  sourcesAt(slot: Date, anchor?: SetAnchor): number[] {
    const found = this.set.next(new Date(slot.getTime() - 1), anchor);
    return found.at.getTime() === slot.getTime() ? found.sources : [];
  }
}
