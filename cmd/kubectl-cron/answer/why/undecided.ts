// No decision about the slot and no Job for it: suspended, stopped, the schedule unusable, the operator down or
// unclear, or not decided yet; and a slot still to come.
import { type CronJob, jobNameFor } from "../../../../api/v1/index.ts";
import { NO_CAUSE } from "../causes.ts";
import { iso } from "../../model/time.ts";
import { operatorTrace } from "./operator.ts";
import { stoppedVerdict } from "./stopped.ts";
import { ago, type Found, found, SECOND, secondsBetween, type SlotContext, type Verdict } from "./verdict.ts";

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
 * No decision about the slot and no Job for it: what the CronJob's state and the operator's say, about a slot past
 * or (`toCome`) still to come. `job`: the Job a run of it would be (unset: the schedule's Job of the slot; a run
 * after an upstream or a join is named from the runs it follows).
 */
export function undecidedVerdict(
  c: SlotContext,
  operator: Found[],
  o: { toCome?: boolean; job?: string } = {},
): Verdict {
  const { cronJob, slotText: when, f } = c;
  const toCome = o.toCome ?? false;
  const job = o.job ?? jobNameFor(c.name, c.slot);
  if (cronJob.spec?.suspend) {
    const by = suspendedBy(cronJob);
    return found(
      "suspended",
      { when, toCome, ...(by ? { suspendedBy: by } : {}), name: c.name, namespace: c.namespace },
      [`spec.suspend: true${by ? `; managedFields: ${by}` : ""}`],
    );
  }
  if (cronJob.status?.stopped) return stoppedVerdict(c, toCome);
  const unavailable = cronJob.status?.conditions?.find(
    (x) =>
      x.type === "Available" &&
      x.status === "False" &&
      (x.reason === "InvalidSchedule" || x.reason === "UnknownTimeZone"),
  );
  if (unavailable) {
    return found("invalid-schedule", { when, ...(unavailable.message ? { message: unavailable.message } : {}) }, [
      `condition Available=False ${unavailable.reason}: ${unavailable.message}`,
    ]);
  }
  const last = cronJob.status?.lastScheduleTime;
  const lastMissed = cronJob.status?.lastMissedTime;
  if (lastMissed && Date.parse(lastMissed) === c.slot.getTime()) {
    return found(
      "deadline-missed",
      { when, recordLost: true, name: c.name, namespace: c.namespace, slot: iso(c.slot) },
      [`status.lastMissedTime: ${lastMissed}`],
    );
  }
  if (last && Date.parse(last) >= c.slot.getTime()) {
    return {
      status: "unknown",
      verdict: NO_CAUSE.beyondRecord({ when }),
      evidence: [
        `status.lastScheduleTime: ${last}`,
        `status.recentRuns holds ${cronJob.status?.recentRuns?.length ?? 0} newer decisions`,
      ],
      fix: [],
    };
  }
  const down = operator.find(
    (x) => x.cause === "operator-down" || x.cause === "operator-no-leader" || x.cause === "instance-down",
  );
  if (down) return found(down.cause, { ...down.params, when }, down.evidence);
  const unclear = operator.find((x) => x.cause === "operator-unclear");
  if (unclear && f.now.getTime() - c.slot.getTime() >= JUST_DUE_MS) {
    return found(
      unclear.cause,
      { ...unclear.params, when },
      [`no entry for ${iso(c.slot)} in status.recentRuns, no Job ${job}`, ...unclear.evidence],
      "unknown",
    );
  }
  if (f.now.getTime() - c.slot.getTime() < JUST_DUE_MS) {
    return {
      status: "healthy",
      verdict: NO_CAUSE.dueNow({ when, late: String(secondsBetween(c.slot, f.now)) }),
      evidence: [],
      fix: [],
    };
  }
  return found(
    "not-yet-decided",
    { when, age: ago(c.slot, f.now) },
    [
      `no entry for ${iso(c.slot)} in status.recentRuns, no Job ${job}`,
      `status.lastScheduleTime: ${last ?? "(none)"}; status.nextScheduleTime: ${cronJob.status?.nextScheduleTime ?? "(none)"}`,
      ...operatorTrace(f.operator, f.now, c.namespace),
    ],
    "unknown",
  );
}

/** A slot still to come (`--slot` in the future): it is not late; only a suspension or a stop keeps it from running. */
export function futureVerdict(c: SlotContext, operator: Found[]): Verdict {
  if (c.cronJob.spec?.suspend || c.cronJob.status?.stopped) {
    return undecidedVerdict(c, operator, { toCome: true });
  }
  return {
    status: "healthy",
    verdict: NO_CAUSE.toCome({ when: c.slotText, age: ago(c.f.now, c.slot) }),
    evidence: [`the API server's time is ${iso(c.f.now)}`],
    fix: [],
  };
}
