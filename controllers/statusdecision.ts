// When a pass's status write goes (docs/architecture.md, "Status writes: what waits, and for how long"): now, later,
// or not at all, each with one reason code, decided by one function over the pass's facts, in the order of the table
// there. The rules it reads are each written once, in their own module: the books (`booksLate` below; books.ts
// statusBehind), the delay for a run just created (statuswait.ts holdForRun), a new CronJob's announcement
// (statuswait.ts announcesOnly), and the fold's news, room and bound (statusfold.ts). Pure, but the fold's budget:
// taking or reserving a token is the decision's one effect, and it happens only when the decision reaches the fold.
import type { StatusNews, StatusWriteBudget } from "./statusfold.ts";
import { boundLeftMs, foldStatus, StatusNews as News } from "./statusfold.ts";

/** Why a status write waits, goes now, or is not made: one code per row of the table, in its order. */
export const StatusWriteReason = {
  /** A create or a write of the pass failed, or it met a problem: reported at once, whatever would make it wait. */
  failed: "failed",
  /** A burst of Job creates is on: the write waits for a pass once it is quiet (unless the books are late). */
  burst: "burst",
  /** The pass created a Job while other CronJobs wait in the queue: its write waits a pass (unless the books are late). */
  created: "created",
  /** A new CronJob's first status, which only announces, while other CronJobs wait: once, until the queue is idle. */
  announce: "announce",
  /** Runs this process just created, for --status-write-delay: a run that ends within it is written once. */
  runDelay: "runDelay",
  /** The status is the stored one (or the one this process just wrote): nothing to write. */
  unchanged: "unchanged",
  /** Without the fold: a change, written at once. */
  changed: "changed",
  /** With the fold: news, which no Job tells (statusfold.ts statusNews), written at once. */
  news: "news",
  /** With the fold: a change the Jobs tell, with a token of the budget for it. */
  room: "room",
  /** With the fold: a change the Jobs tell that has waited its bound (--status-write-max-delay). */
  bound: "bound",
  /** With the fold: a change the Jobs tell, folded into a later write (its reserved token, or its bound). */
  folded: "folded",
} as const;
export type StatusWriteReason = (typeof StatusWriteReason)[keyof typeof StatusWriteReason];

/** Why the books may wait no longer: a burst's or a queue's deferral does not apply (the overrides). */
export const BooksLate = {
  /** A run a folded write left unbooked lost its Job: its slot counts as run, and says so now. */
  jobGone: "jobGone",
  /** An excluded slot decided this pass: a later pass would judge the slot by the calendar as it is then. */
  excludedSlot: "excludedSlot",
  /** With the fold, the bound is reached; without it, the stored status is a run behind (books.ts statusBehind). */
  behind: "behind",
} as const;
export type BooksLate = (typeof BooksLate)[keyof typeof BooksLate];

/** The pass's facts the decision reads; the costly ones as functions, read only by the row that needs them. */
export interface StatusWriteFacts {
  readonly nowMs: number;
  /** The pass's create or write failed (its retry), or it met a problem. */
  readonly failed: boolean;
  /** A run a folded write left unbooked lost its Job (observe.ts, Observation.vanished). */
  readonly jobsGone: boolean;
  /** The pass decided an excluded slot (lastExcludedTime moved). */
  readonly excludedSlot: boolean;
  /** A burst of creates is on (the work queue's burst window). */
  readonly burst: boolean;
  /** The pass created a Job. */
  readonly created: boolean;
  /** Other CronJobs' passes wait in the queue. */
  readonly queued: boolean;
  /** The status would only announce (statuswait.ts announcesOnly) and the pass decided nothing. */
  readonly announcesOnly: boolean;
  /** An announcement already waited once (memory): it goes now. */
  readonly announceWaited: boolean;
  /** How long the runs this process just created may still hold the write (statuswait.ts holdForRun), in ms. */
  readonly runHold: () => number | undefined;
  /** Whether there is a status to write (statuswriter.ts statusToWrite). */
  readonly changed: () => boolean;
  /** Without the fold: whether the stored status is a run behind (books.ts statusBehind). */
  readonly runBehind: () => boolean;
  /** The fold's facts, when it is on. */
  readonly fold?: {
    readonly budget: StatusWriteBudget;
    /** Since when status has lacked a change the Jobs show (statusfold.ts behindSince), ms. */
    readonly since: number;
    /** How much before the bound the write is due (statusfold.ts boundSpreadMs), ms. */
    readonly spread: number;
    /** The token a folded pass of this CronJob reserved (memory), ms. */
    readonly reservedAt?: number;
    /** The first change no Job tells (statusfold.ts statusNews). */
    readonly news: () => StatusNews | undefined;
  };
}

/** Now, later (when: the pass's requeue, the burst's quiet, the queue's idle, or in ms), or not at all. */
export type StatusWriteDecision =
  | {
      readonly write: "now";
      readonly reason: "failed" | "changed" | "news" | "room" | "bound";
      readonly news?: StatusNews;
      /** Why a deferral did not apply. */
      readonly override?: BooksLate;
    }
  | { readonly write: "later"; readonly reason: "burst"; readonly when: "quiet" }
  | { readonly write: "later"; readonly reason: "created"; readonly when: "requeue" }
  | { readonly write: "later"; readonly reason: "announce"; readonly when: "idle" }
  | {
      readonly write: "later";
      readonly reason: "runDelay" | "folded";
      readonly afterMs: number;
      readonly reservedAt?: number;
    }
  | { readonly write: "never"; readonly reason: "unchanged"; readonly override?: BooksLate };

/** The books' overrides, in order: the first that holds, or undefined (a deferral may apply). */
function booksLate(f: StatusWriteFacts): BooksLate | undefined {
  if (f.jobsGone) return BooksLate.jobGone;
  if (f.excludedSlot) return BooksLate.excludedSlot;
  const behind = f.fold
    ? boundLeftMs(f.fold.since, f.fold.budget.maxDelayMs, f.fold.spread, f.nowMs) <= 0
    : f.runBehind();
  return behind ? BooksLate.behind : undefined;
}

/** The table's rows, in order: the first that decides is the decision. */
export function decideStatusWrite(f: StatusWriteFacts): StatusWriteDecision {
  if (f.failed) return f.changed() ? { write: "now", reason: "failed" } : { write: "never", reason: "unchanged" };
  const late = booksLate(f);
  if (late === undefined && f.burst) return { write: "later", reason: "burst", when: "quiet" };
  if (late === undefined && f.created && f.queued) return { write: "later", reason: "created", when: "requeue" };
  const override = late !== undefined && (f.burst || (f.created && f.queued)) ? late : undefined;
  if (f.announcesOnly && !f.announceWaited && f.queued) return { write: "later", reason: "announce", when: "idle" };
  // An excluded slot decided this pass is written at once: until it is stored, a calendar change could still run it.
  const hold = f.excludedSlot ? undefined : f.runHold();
  if (hold !== undefined) return { write: "later", reason: "runDelay", afterMs: hold };
  if (!f.changed()) return { write: "never", reason: "unchanged", ...(override && { override }) };
  if (!f.fold) return { write: "now", reason: "changed", ...(override && { override }) };
  const { budget, since, spread, reservedAt } = f.fold;
  const fold = f.jobsGone
    ? ({ write: true, why: "news", news: News.jobLeaves } as const)
    : foldStatus(f.fold.news(), since, budget, f.nowMs, reservedAt, spread);
  if (!fold.write) {
    const reserved = fold.reservedAt !== undefined ? { reservedAt: fold.reservedAt } : {};
    return { write: "later", reason: "folded", afterMs: fold.waitMs, ...reserved };
  }
  return { write: "now", reason: fold.why, ...(fold.news && { news: fold.news }), ...(override && { override }) };
}
