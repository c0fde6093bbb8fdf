// What a verdict is made of: the Diagnosis the command prints, a Finding (a cause found besides the verdict),
// the context of the slot asked about, and found() and finding(), the one way a verdict or a finding names a cause (its
// words and its fix are the row's, said with the facts the modules gathered).
import type { CronJob, Job } from "../../../../api/v1/index.ts";
import {
  type CauseId,
  type CauseParamsOf,
  fixOf,
  type NextCauseId,
  nextOf,
  type NextParamsOf,
  verdictOf,
} from "../causes.ts";
import { humanDuration, iso } from "../../model/time.ts";
import type { ExclusionsView } from "../../../../api/v1/index.ts";
import type { Excluded } from "../../model/exclusions.ts";
import type { PodFacts, WhyFacts } from "../../model/facts.ts";
import type { ClaimState } from "../../model/claims.ts";

export const SECOND = 1000;

export const secondsBetween = (a: Date, b: Date) => Math.max(0, Math.round((b.getTime() - a.getTime()) / SECOND));
export const ago = (t: Date, now: Date) => humanDuration(secondsBetween(t, now));
export const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
/** A stored time (a Lease's MicroTime too) as the plugin prints times: to the second, in UTC. */
export const stamp = (t: string) => (Number.isNaN(Date.parse(t)) ? t : iso(new Date(t)));

/** A finding: a cause with the evidence for it and what to do. */
export interface Finding {
  cause: CauseId;
  /** One line. */
  summary: string;
  evidence: string[];
  fix: string[];
  /** It says the state cannot be told (exit 2), not that something is wrong. */
  unsure?: true;
}

/** Which install and instance runs a CronJob's namespace, from its claim (claim.ts): its state and line, in CLAIMS' words. */
export interface RunBy {
  state: ClaimState["state"] | "unclaimed" | "unreadable";
  text: string;
  install?: string;
  instance?: string;
  /** When the instance took the namespace (the claim's acquireTime). */
  since?: string;
  /** The instance Lease that keeps the claim alive. */
  instanceLease?: string;
}

export interface Diagnosis {
  cronJob: { namespace: string; name: string };
  /** The slot the verdict is about (absent: the CronJob has had none yet). */
  slot?: {
    utc: string;
    local: string;
    timeZone: string;
    note?: string;
    /** With several schedules (API v2): the ones it is a slot of, each with its zone. */
    schedules?: { schedule: string; timeZone: string }[];
  };
  /**
   * A run-now or backfill request the verdict is about instead of the latest slot (it waits for a place in its group;
   * a backfill's slot is `slot`): its trigger (RunNow, Backfill) and its request, the run-now value or backfill id.
   */
  request?: { trigger: string; id: string };
  /** healthy: it ran (or runs) as it should; cause: a cause found; unknown: the state does not tell. */
  status: "healthy" | "cause" | "unknown";
  verdict: string;
  cause?: CauseId;
  evidence: string[];
  fix: string[];
  next?: { utc: string; local: string; text: string; note?: string; blocked?: string };
  /** Which install and instance runs its namespace, from the namespace's claim (absent: the claim was not read). */
  runBy?: RunBy;
  /** Other findings that need attention (the operator's health, a risk), besides the verdict. */
  also: Finding[];
  /** What could not be read. */
  unreadable: string[];
  /** 0 healthy, 1 a cause found, 2 cannot tell. */
  exitCode: 0 | 1 | 2;
}

export interface SlotContext {
  f: WhyFacts;
  cronJob: CronJob;
  name: string;
  namespace: string;
  zone: string;
  slot: Date;
  slotText: string;
  podsOf: (job: string) => PodFacts[];
  jobNamed: (job: string) => Readonly<Job> | undefined;
  /** spec.exclusions as read (its own windows, the calendars it names). */
  exclusions: ExclusionsView;
  /** What excludes a slot of the schedules as written, by the windows read (undefined: none does). */
  excludedBy: (slot: Date) => Excluded | undefined;
}

export type Verdict = Pick<Diagnosis, "status" | "verdict" | "cause" | "evidence" | "fix">;

/**
 * A verdict naming a cause: its words (said with `params.when`, the slot in words) and its fix are the cause's row
 * said with `params`, the facts found.
 */
export const found = <I extends CauseId>(
  cause: I,
  params: CauseParamsOf<I>,
  evidence: string[],
  status: "cause" | "unknown" = "cause",
): Verdict => ({
  status,
  verdict: verdictOf(cause, params),
  cause,
  evidence,
  fix: fixOf(cause, params),
});

/** A cause found besides the verdict, as facts: finding() says it; with the slot (`when`) found() makes it the verdict. */
export interface Found {
  cause: CauseId;
  params: CauseParamsOf<CauseId>;
  evidence: string[];
  unsure?: true;
}

/** A cause found besides the verdict, its facts typed by its row. */
export const fact = <I extends CauseId>(
  cause: I,
  params: CauseParamsOf<I>,
  evidence: string[],
  unsure?: true,
): Found => ({ cause, params, evidence, ...(unsure ? { unsure } : {}) });

/** Whether `x` is a finding of one of `causes`: its facts are then its row's (fact() typed them so). */
export const isOf = <I extends CauseId>(
  x: Found,
  ...causes: I[]
): x is Found & { cause: I; params: CauseParamsOf<I> } => (causes as CauseId[]).includes(x.cause);

/** A finding as the diagnosis shows it: its summary and fix are its row's, said with its facts (no slot). */
export const finding = (x: Found): Finding => ({
  cause: x.cause,
  ...(x.unsure ? { unsure: x.unsure } : {}),
  summary: verdictOf(x.cause, x.params),
  evidence: x.evidence,
  fix: fixOf(x.cause, x.params),
});

/** What keeps the next slot from running, as facts: which cause, and what its row's `next` words take. */
export interface Blocker {
  cause: NextCauseId;
  params: NextParamsOf<NextCauseId>;
}

/** A cause that keeps the next slot from running, its facts typed by its row's `next`. */
export const blocker = <I extends NextCauseId>(cause: I, params: NextParamsOf<I>): Blocker => ({ cause, params });

/** What keeps the next slot from running, as the diagnosis shows it (`Next: TIME; WORDS`): its row's words. */
export const blockedText = (b: Blocker): string => nextOf(b.cause, b.params);
