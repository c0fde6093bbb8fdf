// When the commit's status write waits (docs/architecture.md, "Status writes" and "Cold start"): for the runs this
// process just created, so that a run that ends within --status-write-delay is written once (its creation and its
// end together); and a new CronJob's first status that only announces, while other CronJobs are queued. Pure.
import type { CronJobWireStatus } from "../api/v1/index.ts";
import type { ConditionInput } from "./conditions.ts";
import type { Outcome, Pass } from "./pass.ts";

/** The Jobs this process created and status has not shown yet, by name: when each was created (ms). */
export function freshRuns(
  before: ReadonlyMap<string, number> | undefined,
  pass: Readonly<Pass>,
  now: Date,
  delayMs: number,
): Map<string, number> | undefined {
  const out = new Map<string, number>();
  for (const [name, at] of before ?? []) if (pass.active.has(name) && now.getTime() - at < delayMs) out.set(name, at);
  for (const name of pass.fresh) out.set(name, now.getTime());
  return out.size ? out : undefined;
}

/**
 * How long the status write may wait for the runs this process just created (ms), or undefined to write now
 * (docs/architecture.md, "Status writes"; the decision's `runDelay` row, statusdecision.ts, which reaches it only for
 * a pass with no problem and no excluded slot). It waits only while the runs status does not show yet are all this
 * process's own, younger than the delay and running, and nothing else is news: no run ended that status has not
 * booked, every Job status lists as active still runs. A restart, or a Job someone else created, is written at once.
 */
export function holdForRun(
  o: Pick<Outcome, "pass" | "unbookedEnds">,
  next: Readonly<CronJobWireStatus>,
  fresh: ReadonlyMap<string, number> | undefined,
  now: Date,
  delayMs: number,
): number | undefined {
  if (delayMs <= 0 || !fresh?.size || o.unbookedEnds > 0) return undefined;
  const shown = new Set((o.pass.cronJob.status?.active ?? []).map((r) => r.name));
  const running = new Set((next.active ?? []).map((r) => r.name));
  for (const name of shown) if (!running.has(name)) return undefined;
  let wait: number | undefined;
  for (const name of running) {
    if (shown.has(name)) continue;
    const at = fresh.get(name ?? "");
    const left = at === undefined ? 0 : at + delayMs - now.getTime();
    if (left <= 0) return undefined;
    // The oldest run's delay ends first: each run shows in status within the delay of its creation.
    wait = Math.min(wait ?? left, left);
  }
  return wait;
}

/**
 * Whether writing `next` would only announce what a never-written status lacks (the next run, conditions saying all
 * is well): no record entry, no active Job, no condition reporting a problem.
 */
export function announcesOnly(
  stored: Readonly<CronJobWireStatus> | undefined,
  next: Readonly<CronJobWireStatus>,
  conditions: readonly ConditionInput[],
): boolean {
  const neverWritten = stored?.observedGeneration === undefined && !stored?.conditions?.length;
  if (!neverWritten || next.recentRuns?.length || next.active?.length) return false;
  return conditions.every(
    (c) => !(c.type === "Degraded" && c.status === "True") && !(c.type === "Available" && c.status !== "True"),
  );
}
