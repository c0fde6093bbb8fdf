// The plugin's half of a trigger row (api/v1 TRIGGER_ROWS): what `why` reads of the CronJob through the row, beyond
// what every reader takes from the row itself. Each part is optional; a row with nothing of its own to say has no half,
// and its runs pending later are then said as evidence. The halves are listed by row name in halves.ts, which diagnose.ts
// and later.ts loop over without naming a row.
import type { Job, RecentRun } from "../../../../api/v1/index.ts";
import type { Found, SlotContext, Verdict } from "./verdict.ts";

/** A slot's first run, as the row whose runs are the slot's own made it: its Job, its record entry. */
export interface FirstRun {
  job?: Readonly<Job> | undefined;
  entry?: RecentRun | undefined;
}

/**
 * What a row's half reads of the CronJob whichever slot is asked: its facts and names, the operator's findings, and
 * the context of a slot at a time (`words`: the slot in words), for a run the row asks about as a slot.
 */
export interface RowGround extends Pick<SlotContext, "f" | "name" | "namespace"> {
  operator: Found[];
  slotAt: (slot: Date, words: string) => SlotContext;
}

/** A row's answer asked about no slot: the verdict, and the time it is about (newer than the latest slot: it answers). */
export interface NowAnswer {
  verdict: Verdict;
  at: Date | undefined;
}

/**
 * The plugin's half of a trigger row. Its causes are not a part of it: `why`'s verdicts are typed by the table of
 * causes, which would then import itself through the half; a row's causes are written in its spec module and listed
 * by row name in api/v1 TRIGGER_CAUSES, which the table of causes (../causes.ts) takes.
 */
export interface TriggerHalf {
  /**
   * Its reading of a slot's later runs, for a row whose runs are never a slot's own (no slotRank: the retry's
   * attempts): the slot's verdict, undefined when it has none to say. Without one, the row's runs of the slot still
   * pending are said as evidence.
   */
  readonly later?: (c: SlotContext, first: FirstRun) => Verdict | undefined;
  /**
   * Its problems, said whichever slot is asked about (spec.after's: a cycle, an upstream missing); a problem is the
   * verdict of a CronJob with no slot yet.
   */
  readonly problems?: (g: RowGround) => Found[];
  /** What it says asked about no slot (spec.after's: what the CronJob waits for of its upstreams now). */
  readonly now?: (g: RowGround) => NowAnswer | undefined;
}
