// Field matching on local wall-clock time, delegated to cron-parser. Wall times are encoded as the instant
// that shows the same fields in UTC ("floating" time) and cron-parser runs in UTC, so none of its DST
// heuristics apply: mapping wall time to instants is slots.ts' job.

import {
  CronDayOfMonth,
  CronDayOfWeek,
  CronExpression,
  CronFieldCollection,
  CronHour,
  CronMinute,
  CronMonth,
  CronSecond,
  type DayOfMonthRange,
  type DayOfWeekRange,
  type HourRange,
  type MonthRange,
  type SixtyRange,
} from "cron-parser";
import type { CronFields } from "./grammar.ts";

export class WallClockCron {
  readonly #expression: CronExpression;

  constructor(fields: CronFields) {
    // The explicit wildcard flags carry robfig's star bit; cron-parser would otherwise infer them from the
    // raw text (treating "*/1" and "*,5" as restricted) and switch day matching between AND and OR wrongly.
    const collection = new CronFieldCollection({
      second: new CronSecond([0]),
      minute: new CronMinute(fields.minute as SixtyRange[]),
      hour: new CronHour(fields.hour as HourRange[]),
      dayOfMonth: new CronDayOfMonth(fields.dayOfMonth as DayOfMonthRange[], { wildcard: fields.dayOfMonthStar }),
      month: new CronMonth(fields.month as MonthRange[]),
      dayOfWeek: new CronDayOfWeek(fields.dayOfWeek as DayOfWeekRange[], { wildcard: fields.dayOfWeekStar }),
    });
    // A current date of our own (every use resets it): without one, cron-parser starts from luxon's DateTime.local(),
    // which reads the process's zone through an Intl.DateTimeFormat, paging in ICU's date data (~8 MB, issue 72).
    this.#expression = new CronExpression(collection, { tz: "UTC", currentDate: new Date(0) });
  }

  /** The first matching wall time strictly after `wall`. */
  nextAfter(wall: number): number {
    this.#expression.reset(new Date(wall));
    return this.#expression.next().getTime();
  }

  /** The last matching wall time at or before `wall`, or undefined if cron-parser cannot find one. */
  latestAtOrBefore(wall: number): number | undefined {
    // prev() is strictly-before for whole seconds but truncates milliseconds first; +1 ms makes it inclusive.
    this.#expression.reset(new Date(wall + 1));
    try {
      return this.#expression.prev().getTime();
    } catch {
      return undefined;
    }
  }
}
