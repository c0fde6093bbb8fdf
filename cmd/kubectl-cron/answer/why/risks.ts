// What needs attention besides the verdict: what keeps the next slot from running, and the risks the record shows
// (a deadline close to the operator's lag, a run-now request waiting) or its group does (a group that does not
// exist).
import { classifyJob, manualJobName, runNowRequestOf } from "../../../../api/v1/index.ts";
import type { CauseId } from "../causes.ts";
import type { ExclusionsView } from "../../../../api/v1/index.ts";
import type { WhyFacts } from "../../model/facts.ts";
import { calendarFinding } from "./excluded.ts";
import { groupBlocker } from "./group.ts";
import { observedLags } from "./missed.ts";
import { type Blocker, blocker, fact, type Finding, finding, type Found, isOf } from "./verdict.ts";

/** A deadline whose use by the operator's lag passed this share is too short. */
const LAG_SHARE = 0.5;

/** What may keep the next slot from running: the cause, and the facts its row's `next` words take. */
export function nextBlocker(f: WhyFacts, operator: Found[], exclusions: ExclusionsView): Blocker | undefined {
  const cj = f.cronJob;
  if (cj.spec?.suspend) return blocker("suspended", {});
  if (cj.status?.stopped) return blocker("stopped-after-failures", {});
  const hold = exclusions.hold;
  if (hold) {
    return blocker("calendar-not-found", {
      calendarMissing: hold.missing,
      ...(hold.calendar === undefined ? {} : { calendar: hold.calendar }),
    });
  }
  if (cj.spec?.concurrencyPolicy === "Forbid") {
    const running = f.jobs.filter((j) => classifyJob(j) === "active").map((j) => j.metadata?.name ?? "?");
    if (running.length) return blocker("forbid-held", { job: running.join(", ") });
  }
  const down = operator.find((x) => isOf(x, "operator-down", "operator-no-leader", "instance-down"));
  if (down) return blocker(down.cause, down.params);
  return groupBlocker(f);
}

/** Risks the record shows even when the slot ran. */
export function risks(f: WhyFacts, verdictCause: CauseId | undefined, exclusions: ExclusionsView): Finding[] {
  const out: Finding[] = [];
  const cj = f.cronJob;
  const calendar =
    verdictCause === "calendar-not-found"
      ? undefined
      : calendarFinding({ f, cronJob: cj, namespace: cj.metadata?.namespace ?? "", exclusions });
  if (calendar) out.push(finding(calendar));
  const deadline = cj.spec?.startingDeadlineSeconds;
  const lags = observedLags(cj);
  const worst = lags.length ? Math.max(...lags) : undefined;
  if (
    deadline !== undefined &&
    worst !== undefined &&
    worst > deadline * LAG_SHARE &&
    verdictCause !== "deadline-shorter-than-lag"
  ) {
    out.push(
      finding(
        fact("deadline-shorter-than-lag", { deadline: String(deadline), worstLag: String(worst) }, [
          `lags in status.recentRuns: ${lags.join(", ")} s`,
        ]),
      ),
    );
  }
  const group = f.group;
  if (group?.exists === false && verdictCause !== "group-not-found") {
    const degraded = cj.status?.conditions?.find((x) => x.type === "Degraded" && x.status === "True");
    out.push(
      finding(
        fact("group-not-found", { group: group.name, namespace: group.namespace, pastDeadline: false }, [
          `spec.concurrencyGroup: ${group.name}; no ConcurrencyGroup ${group.name} in namespace ${group.namespace}`,
          ...(degraded ? [`condition Degraded=True ${degraded.reason ?? "?"}: ${degraded.message ?? ""}`] : []),
        ]),
      ),
    );
  }
  const request = runNowRequestOf(cj);
  if (request && request !== cj.status?.lastRunNowRequest && verdictCause !== "run-now-waiting") {
    const running = f.jobs.filter((j) => classifyJob(j) === "active").map((j) => j.metadata?.name ?? "");
    if (running.length && cj.spec?.concurrencyPolicy !== "Allow") {
      out.push(
        finding(
          fact(
            "run-now-waiting",
            {
              request,
              policy: String(cj.spec?.concurrencyPolicy),
              namespace: cj.metadata?.namespace ?? "",
              job: running.join(" "),
            },
            [
              `annotation run-now: ${request}; status.lastRunNowRequest: ${cj.status?.lastRunNowRequest ?? "(none)"}; its Job would be ${manualJobName(cj.metadata?.name ?? "", request)}`,
            ],
          ),
        ),
      );
    }
  }
  return out;
}
