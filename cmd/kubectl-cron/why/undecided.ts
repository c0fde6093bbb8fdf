// No decision about the slot and no Job for it: suspended, stopped, the schedule unusable, the operator down or
// unclear, or not decided yet; and a slot still to come.
import { type CronJob, jobNameFor } from "../../../api/v1/index.ts";
import { fixOf } from "../causes.ts";
import { iso } from "../history.ts";
import { operatorTrace } from "./operator.ts";
import { stoppedVerdict } from "./stopped.ts";
import { ago, type Finding, found, SECOND, secondsBetween, type SlotContext, type Verdict } from "./verdict.ts";

/** A slot this recent and not yet decided about is due now, not missed. */
export const JUST_DUE_MS = 60 * SECOND;

/** Who set spec.suspend, and when: the newest managedFields entry that owns it. */
function suspendedBy(cronJob: CronJob): string | undefined {
  const entries = (cronJob.metadata?.managedFields ?? []) as {
    manager?: string;
    operation?: string;
    time?: string;
    fieldsV1?: { "f:spec"?: Record<string, unknown> };
  }[];
  const owners = entries.filter((m) => m.fieldsV1?.["f:spec"]?.["f:suspend"] !== undefined);
  owners.sort((a, b) => (b.time ?? "").localeCompare(a.time ?? ""));
  const m = owners[0];
  return m ? `${m.manager ?? "?"} (${m.operation ?? "?"}) at ${m.time ?? "?"}` : undefined;
}

/**
 * No decision about the slot and no Job for it: what the CronJob's state and the operator's say. `verb`: "did not
 * run", or of a slot to come "will not run".
 */
export function undecidedVerdict(c: SlotContext, operator: Finding[], verb = "did not run"): Verdict {
  const { cronJob, slotText: when, f } = c;
  if (cronJob.spec?.suspend) {
    const by = suspendedBy(cronJob);
    return found(
      "suspended",
      `${verb} at ${when}: the CronJob is suspended${by ? ` (spec.suspend set by ${by})` : ""}`,
      [`spec.suspend: true${by ? `; managedFields: ${by}` : ""}`],
      { name: c.name, namespace: c.namespace },
    );
  }
  if (cronJob.status?.stopped) return stoppedVerdict(c, verb);
  const unavailable = cronJob.status?.conditions?.find(
    (x) =>
      x.type === "Available" &&
      x.status === "False" &&
      (x.reason === "InvalidSchedule" || x.reason === "UnknownTimeZone"),
  );
  if (unavailable) {
    return found(
      "invalid-schedule",
      `did not run at ${when}: ${unavailable.message}`,
      [`condition Available=False ${unavailable.reason}: ${unavailable.message}`],
      {},
    );
  }
  const last = cronJob.status?.lastScheduleTime;
  const lastMissed = cronJob.status?.lastMissedTime;
  if (lastMissed && Date.parse(lastMissed) === c.slot.getTime()) {
    return found(
      "deadline-missed",
      `did not run at ${when}: the operator reported it missed (status.lastMissedTime); the record no longer holds why`,
      [`status.lastMissedTime: ${lastMissed}`],
      { name: c.name, namespace: c.namespace, slot: iso(c.slot) },
    );
  }
  if (last && Date.parse(last) >= c.slot.getTime()) {
    return {
      status: "unknown",
      verdict: `cannot tell about ${when}: it is older than the ${10} decisions the record keeps, and no Job for it is left`,
      evidence: [
        `status.lastScheduleTime: ${last}`,
        `status.recentRuns holds ${cronJob.status?.recentRuns?.length ?? 0} newer decisions`,
      ],
      fix: [],
    };
  }
  const down = operator.find((x) => x.cause === "operator-down" || x.cause === "operator-no-leader");
  if (down) {
    return {
      status: "cause",
      cause: down.cause,
      verdict: `did not run at ${when}: ${down.summary}`,
      evidence: down.evidence,
      fix: down.fix,
    };
  }
  const unclear = operator.find((x) => x.cause === "operator-unclear");
  if (unclear && f.now.getTime() - c.slot.getTime() >= JUST_DUE_MS) {
    return {
      status: "unknown",
      cause: unclear.cause,
      verdict: `did not run at ${when}, and ${unclear.summary}`,
      evidence: [
        `no entry for ${iso(c.slot)} in status.recentRuns, no Job ${jobNameFor(c.name, c.slot)}`,
        ...unclear.evidence,
      ],
      fix: unclear.fix,
    };
  }
  if (f.now.getTime() - c.slot.getTime() < JUST_DUE_MS) {
    return {
      status: "healthy",
      verdict: `${when} is due now: the operator has not started it yet (${secondsBetween(c.slot, f.now)} s ago)`,
      evidence: [],
      fix: [],
    };
  }
  return {
    status: "unknown",
    verdict: `did not run at ${when}: the operator has not decided about it (${ago(c.slot, f.now)} ago) and looks healthy`,
    cause: "not-yet-decided",
    evidence: [
      `no entry for ${iso(c.slot)} in status.recentRuns, no Job ${jobNameFor(c.name, c.slot)}`,
      `status.lastScheduleTime: ${last ?? "(none)"}; status.nextScheduleTime: ${cronJob.status?.nextScheduleTime ?? "(none)"}`,
      ...operatorTrace(f.operator, f.now),
    ],
    fix: fixOf("not-yet-decided", {}),
  };
}

/** A slot still to come (`--slot` in the future): it is not late; only a suspension or a stop keeps it from running. */
export function futureVerdict(c: SlotContext, operator: Finding[]): Verdict {
  if (c.cronJob.spec?.suspend || c.cronJob.status?.stopped) {
    return undecidedVerdict(c, operator, "will not run");
  }
  return {
    status: "healthy",
    verdict: `${c.slotText} has not come yet (in ${ago(c.f.now, c.slot)})`,
    evidence: [`the API server's time is ${iso(c.f.now)}`],
    fix: [],
  };
}
