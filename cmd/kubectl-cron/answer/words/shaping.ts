// What `kubectl cron next`, `history`, `list` and the dashboard say of a CronJob's limits, jitter and upstreams
// (SHAPING).
import { AFTER_WHEN_WORDS } from "./slot.ts";
import { afterPolicyOf } from "../../../../api/v1/join.ts";
import {
  upstreamsOf,
  type AfterWhen,
  offsetText,
  type ScheduleEnd,
  scheduleEndText,
} from "../../../../api/v1/index.ts";

/**
 * What `kubectl cron next`, `history` and the dashboard say of a CronJob's limits (api/v1/limits.ts), jitter and
 * upstreams (spec.after): the end in limits.ts's own words, the rest here.
 */
export const SHAPING = {
  ended: (end: ScheduleEnd) => scheduleEndText(end),
  noRunAfter: (endTime: string) => `no run after ${endTime} (spec.endTime)`,
  runsLeft: (left: number, of: number) => `${left} of ${of} runs left (spec.maxRuns): none after them`,
  notStarted: (startTime: string) => `not started: starts ${startTime} (spec.startTime)`,
  runsAfter: (upstream: string, when: AfterWhen) =>
    `runs after ${upstream}'s ${{ Succeeded: "successful", Failed: "failed", Finished: "finished" }[when]} runs`,
  /** spec.afterPolicy All: one run once every upstream has ended a run as spec.after asks. */
  runsAfterAll: (ups: readonly { cronJob: string; when: AfterWhen }[]) =>
    `runs once all of ${ups.map((u) => `${u.cronJob} (${AFTER_WHEN_WORDS[u.when]})`).join(", ")} have ended a run since its last such run (spec.afterPolicy All)`,
  /** What a CronJob runs after (spec.after, spec.afterPolicy), a line each: `next` and the dashboard say these. */
  afterEdges: (spec: unknown): string[] => {
    const ups = upstreamsOf(spec);
    if (afterPolicyOf(spec) === "All" && ups.length) return [SHAPING.runsAfterAll(ups)];
    return ups.map((u) => SHAPING.runsAfter(u.cronJob, u.when));
  },
  noSchedule: () => "no schedule of its own: it runs only after its upstreams (spec.after)",
  /** A list's SCHEDULE cell of a CronJob with no schedule of its own: its upstreams. */
  afterOnly: (upstreams: readonly string[]) => `after ${upstreams.join(", ")}`,
  /** The window its slots lie in (spec.startTime, spec.endTime; either may be open). */
  window: (start: string | undefined, end: string | undefined) =>
    start && end
      ? `runs from ${start} to ${end} (spec.startTime, spec.endTime)`
      : start
        ? `runs from ${start} (spec.startTime)`
        : `runs until ${end ?? "?"} (spec.endTime)`,
  jitter: (seconds: number) => `jitter ${offsetText(seconds)}: each run starts at its slot plus its offset (STARTS)`,
  /** A jittered run's offset, beside its slot ("+37s"). */
  offset: (seconds: number) => `+${offsetText(seconds)}`,
  /** The upstream run a run after an upstream followed ("after extract/extract-1795572000"). */
  after: (upstream: string, job: string) => `after ${upstream}/${job}`,
  /** The upstream runs a join's run followed ("after all of eu/eu-1795600800, us/us-1795600800"). */
  afterAll: (runs: readonly { cronJob: string; job: string }[]) =>
    `after all of ${runs.map((r) => `${r.cronJob}/${r.job}`).join(", ")}`,
};
