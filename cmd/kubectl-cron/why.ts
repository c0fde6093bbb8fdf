// `kubectl cron why`: for one slot of a CronJob (default: the latest that should have run), a one-line verdict,
// the evidence it rests on, and what to do; then the next slot and whatever else needs attention. A pure function of
// the live state whyfacts.ts read (WhyFacts): the record the operator keeps (status.recentRuns) answers for slots
// whose Events are long gone, the Jobs and Pods for what ran, the Lease and the operator's Pods for the operator
// itself. Every verdict names a row of causes.ts.
import {
  classifyJob,
  type CronJob,
  cronJobSchedules,
  type CronJobSchedules,
  finishedAt,
  type Job,
  jobNameFor,
  manualJobName,
  OutcomeResult,
  RECORD_REASONS,
  type RecentRun,
  RecordDecision,
  RecordTrigger,
  RefusedReason,
  rfc3339InZone,
  retryBackoffWords,
  SKIPPED_REASONS,
  worstCaseRetrySeconds,
  runNowRequestOf,
  scheduledTimeOf,
} from "../../api/v1/index.ts";
import { utcOffsetAt } from "../../api/v1/schedule/index.ts";
import { type CauseId, type FixParamsOf, fixOf } from "./causes.ts";
import { humanDuration, iso } from "./history.ts";
import { nextRuns } from "./next.ts";
import type { OperatorFacts, PodFacts, WhyFacts } from "./whyfacts.ts";

/** A finding: a cause with the evidence for it and what to do. */
interface Finding {
  cause: CauseId;
  /** One line. */
  summary: string;
  evidence: string[];
  fix: string[];
  /** It says the state cannot be told (exit 2), not that something is wrong. */
  unsure?: true;
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
  /** healthy: it ran (or runs) as it should; cause: a cause found; unknown: the state does not tell. */
  status: "healthy" | "cause" | "unknown";
  verdict: string;
  cause?: CauseId;
  evidence: string[];
  fix: string[];
  next?: { utc: string; local: string; text: string; note?: string; blocked?: string };
  /** Other findings that need attention (the operator's health, a risk), besides the verdict. */
  also: Finding[];
  /** What could not be read. */
  unreadable: string[];
  /** 0 healthy, 1 a cause found, 2 cannot tell. */
  exitCode: 0 | 1 | 2;
}

const SECOND = 1000;
/** A slot this recent and not yet decided about is due now, not missed. */
const JUST_DUE_MS = 60 * SECOND;
/** A Job with no Pod for this long after its creation never got one. */
const NO_POD_GRACE_MS = 60 * SECOND;
/** Clocks further apart than this are reported. */
const CLOCK_SKEW_MS = 5 * SECOND;
/** How late the operator reaches a slot when nothing is wrong, at most (a pass, a create, a busy queue). */
const USUAL_LAG_S = 10;
/** A deadline whose use by the operator's lag passed this share is too short. */
const LAG_SHARE = 0.5;

const secondsBetween = (a: Date, b: Date) => Math.max(0, Math.round((b.getTime() - a.getTime()) / SECOND));
const ago = (t: Date, now: Date) => humanDuration(secondsBetween(t, now));

/** "2026-11-25 03:00 Europe/Berlin (2026-11-25T02:00:00Z)", or "2026-11-25 02:00 UTC". */
function slotText(t: Date, timeZone: string): string {
  const local = rfc3339InZone(t, timeZone);
  const wall = `${local.slice(0, 10)} ${local.slice(11, local.slice(17, 19) === "00" ? 16 : 19)}`;
  if (timeZone === "UTC" || timeZone === "Etc/UTC") return `${wall} UTC`;
  return `${wall} ${timeZone} (${iso(t)})`;
}

/**
 * `--slot`: an RFC 3339 time, or a wall-clock time without an offset ("2026-11-25T03:00", "2026-11-25 03:00") read
 * in the CronJob's zone. Undefined when it is neither.
 */
export function parseSlot(text: string, timeZone: string): Date | undefined {
  const t = text.trim();
  if (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/i.test(t)) {
    const d = new Date(t);
    return Number.isNaN(d.getTime()) ? undefined : d;
  }
  const m = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2}))?$/.exec(t);
  if (!m) return undefined;
  const wall = Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +(m[6] ?? 0));
  // Date.UTC rolls a month 13 or a day 45 over into a later date: refuse what is not a calendar time.
  const back = new Date(wall).toISOString();
  if (
    Number.isNaN(wall) ||
    back.slice(0, 10) !== `${m[1]}-${m[2]}-${m[3]}` ||
    back.slice(11, 19) !== `${m[4]}:${m[5]}:${m[6] ?? "00"}`
  )
    return undefined;
  // The offsets in force around that wall time (the same two unless a transition is near); an instant is the wall
  // time's if its own offset is the one it was read with. Twice (clocks go back): the first, as a schedule runs it.
  // Never (a DST gap): read with the offset before the gap, which is where the schedule runs the skipped time.
  const before = utcOffsetAt(timeZone, new Date(wall - 12 * 3600 * SECOND));
  const after = utcOffsetAt(timeZone, new Date(wall + 12 * 3600 * SECOND));
  const fits = [wall - before, wall - after].filter((t) => utcOffsetAt(timeZone, new Date(t)) === wall - t);
  return new Date(fits.length ? Math.min(...fits) : wall - before);
}

/** Where a slot came from: with several schedules (API v2), the ones it is a slot of, and the zone to show it in. */
interface SlotSource {
  zone: string;
  /** ' from schedule "0 9 * * 1-5" (Europe/Berlin)', or "" with one schedule. */
  words: string;
  schedules?: { schedule: string; timeZone: string }[];
}

function slotSource(schedules: CronJobSchedules, slot: Date, anchor: Date | undefined, zone: string): SlotSource {
  const sources = schedules.sourcesAt(slot, anchor);
  if (!sources?.length) return { zone, words: "" };
  const list = sources.map((x) => ({ schedule: x.schedule, timeZone: x.timeZone ?? "UTC" }));
  return {
    zone: list[0]!.timeZone,
    words: ` from schedule ${list.map((x) => `${JSON.stringify(x.schedule)} (${x.timeZone})`).join(" and ")}`,
    schedules: list,
  };
}

/** The zone the CronJob's first schedule runs in. */
export function zoneOf(cronJob: CronJob): string {
  return cronJob.spec?.timeZone || "UTC";
}

function schedulesOf(cronJob: CronJob): CronJobSchedules | undefined {
  const r = cronJobSchedules(cronJob, {
    namespace: cronJob.metadata?.namespace ?? "",
    name: cronJob.metadata?.name ?? "",
  });
  return r.ok ? r.schedules : undefined;
}

function anchorOf(cronJob: CronJob, schedules: CronJobSchedules): Date | undefined {
  return schedules.everyAnchor({
    lastScheduleTime: cronJob.status?.lastScheduleTime,
    creationTimestamp: cronJob.metadata?.creationTimestamp,
  });
}

// --- the operator ------------------------------------------------------------------------------------

/** A decision in the record this recent shows the operator at work now, when nothing says since when it is down. */
const RECENT_DECISION_MS = 3 * 60 * SECOND;

/** What one of the operator's signs shows: up or down, in words, and since when it is down (when it says). */
interface Sign {
  up: boolean;
  text: string;
  since?: Date;
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
/** A stored time (a Lease's MicroTime too) as the plugin prints times: to the second, in UTC. */
const stamp = (t: string) => (Number.isNaN(Date.parse(t)) ? t : iso(new Date(t)));

/** Its Pods and Deployment, where it is deployed: a ready replica, or none (since when), or not deployed there. */
function podsSign(op: OperatorFacts): Sign | undefined {
  if (op.pods === undefined && op.deployments === undefined) return undefined;
  const pods = op.pods ?? [];
  const ready = pods.filter((p) => p.ready);
  if (ready.length) {
    return {
      up: true,
      text: `${plural(ready.length, "ready replica")} in ${op.namespace} (${ready.map((p) => p.name).join(", ")})`,
    };
  }
  if (pods.length) {
    const since = pods.every((p) => p.readySince)
      ? new Date(Math.max(...pods.map((p) => Date.parse(p.readySince!))))
      : undefined;
    return {
      up: false,
      text: `its Pods in ${op.namespace}: ${pods.map((p) => `${p.name} ${p.phase ?? "?"}, not ready, ${plural(p.restarts, "restart")}`).join("; ")}`,
      ...(since ? { since } : {}),
    };
  }
  const deployments = op.deployments ?? [];
  const readyDeployments = deployments.filter((d) => d.readyReplicas > 0);
  if (readyDeployments.length) {
    return {
      up: true,
      text: readyDeployments
        .map((d) => `Deployment ${op.namespace}/${d.name}: ${d.readyReplicas}/${d.replicas} ready replicas`)
        .join("; "),
    };
  }
  if (deployments.length) {
    const since = deployments.find((d) => d.available && !d.available.status && d.available.since)?.available?.since;
    return {
      up: false,
      text: deployments
        .map((d) => `Deployment ${op.namespace}/${d.name}: ${d.readyReplicas}/${d.replicas} ready replicas`)
        .join("; "),
      ...(since ? { since: new Date(since) } : {}),
    };
  }
  return undefined;
}

/** Its Lease, where it holds one (its replicas run with --leader-elect, or a Lease is there). */
function leaseSign(op: OperatorFacts, now: Date): Sign | undefined {
  const where = `Lease ${op.namespace}/${op.leaseName}`;
  const lease = op.lease;
  if (!lease?.renewTime) {
    const electing = (op.pods ?? []).some((p) => p.leaderElect);
    if (!lease && !electing) return undefined;
    return {
      up: false,
      text: lease ? `${where} has no renewTime` : `no ${where}, while its replicas run with --leader-elect`,
    };
  }
  const renewed = new Date(lease.renewTime);
  const duration = (lease.leaseDurationSeconds ?? 15) * SECOND;
  const fresh = now.getTime() - renewed.getTime() <= duration;
  const text = `${where}: holder ${lease.holder ?? "(none: released)"}, renewed ${stamp(lease.renewTime)} (${ago(renewed, now)} ago), leaseDurationSeconds ${lease.leaseDurationSeconds ?? "?"}`;
  if (fresh && lease.holder) return { up: true, text };
  return { up: false, text, since: new Date(renewed.getTime() + (lease.holder ? duration : 0)) };
}

/**
 * The record: the newest decision the operator wrote, wherever it runs. It counts as "up" when it is newer than
 * the time a down sign says the operator stopped (or, when none says, recent).
 */
function recordSign(op: OperatorFacts, now: Date, downSince: Date | undefined): Sign | undefined {
  const newest = op.newestDecision;
  if (!newest) return undefined;
  const at = new Date(newest.at);
  const after = downSince ? at > downSince : now.getTime() - at.getTime() <= RECENT_DECISION_MS;
  if (!after) return undefined;
  return {
    up: true,
    text: `the record shows a decision at ${stamp(newest.at)} (${ago(at, now)} ago, ${newest.cronJob})`,
  };
}

/** Where the operator was looked for, in words (for a verdict that found no trace of it). */
function lookedFor(op: OperatorFacts): string {
  const how = {
    flag: "--operator-namespace",
    webhook: "its webhooks' Service",
    label: "its Pods' labels",
    default: "the default install",
  }[op.foundBy];
  return `looked for its Pods and Deployment (${op.selector}) and ${op.leaseName} in ${op.namespace} (from ${how})`;
}

/** What the operator shows of itself, for a verdict that asks whether it is at work (up signs, or where it was looked for). */
function operatorTrace(op: OperatorFacts, now: Date): string[] {
  const signs = [podsSign(op), leaseSign(op, now), recordSign(op, now, undefined)].filter((x): x is Sign => !!x);
  if (signs.length) return signs.map((x) => `the operator: ${x.text}`);
  return [
    `the operator: no trace of it: ${lookedFor(op)}; ${op.newestDecision ? `the record's newest decision is ${stamp(op.newestDecision.at)} (${op.newestDecision.cronJob})` : "no decision in the record"} — if it runs outside the cluster (make run), it is stopped or cannot reach the API server`,
  ];
}

/**
 * Whether the operator runs, from what it shows wherever it runs: its Pods and Deployment, its Lease, the record.
 * Down only when a sign says so and none says otherwise; "cannot tell" when they disagree.
 */
function livenessFindings(f: WhyFacts): Finding[] {
  const op = f.operator;
  const pods = podsSign(op);
  const lease = leaseSign(op, f.now);
  const downs = [pods, lease].filter((x): x is Sign => x !== undefined && !x.up);
  const sinces = downs.map((x) => x.since).filter((t): t is Date => t !== undefined);
  const record = recordSign(
    op,
    f.now,
    sinces.length ? new Date(Math.min(...sinces.map((t) => t.getTime()))) : undefined,
  );
  if (!downs.length) return [];
  const ups = [pods, lease, record].filter((x): x is Sign => x !== undefined && x.up);
  const evidence = [...downs, ...ups].map((x) => x.text);
  if (!record) {
    evidence.push(
      op.newestDecision
        ? `the record's newest decision is older: ${stamp(op.newestDecision.at)} (${op.newestDecision.cronJob})`
        : "no decision in the record of the CronJobs read",
    );
  }
  const podsDown = pods !== undefined && !pods.up;
  // Replicas up but none leading is the no-leader case, not a disagreement; a Lease renewed or a decision after
  // the replicas went down, or a decision after the Lease lapsed, is.
  const contradicting = podsDown ? [lease, record].filter((x) => x?.up) : [record].filter((x) => x?.up);
  if (contradicting.length) {
    return [
      {
        cause: "operator-unclear",
        unsure: true,
        summary: `cannot tell whether the operator runs: ${downs.map((x) => x.text).join("; ")}, but ${contradicting.map((x) => x!.text).join(", and ")}`,
        evidence,
        fix: fixOf("operator-unclear", {}),
      },
    ];
  }
  if (podsDown) {
    return [
      {
        cause: "operator-down",
        summary: `the operator has no ready replica in namespace ${op.namespace}`,
        evidence,
        fix: fixOf("operator-down", { operatorNamespace: op.namespace, operatorSelector: op.selector }),
      },
    ];
  }
  const l = op.lease;
  return [
    {
      cause: "operator-no-leader",
      summary: !l?.renewTime
        ? `no replica leads: there is no Lease ${op.namespace}/${op.leaseName}`
        : l.holder
          ? `no replica leads: the Lease was last renewed ${ago(new Date(l.renewTime), f.now)} ago by ${l.holder}`
          : `no replica leads: the last leader released the Lease ${ago(new Date(l.renewTime), f.now)} ago and none took it`,
      evidence: [...evidence, `the API server's time is ${iso(f.now)}`],
      fix: fixOf("operator-no-leader", {}),
    },
  ];
}

/** What is wrong with the operator itself now (whether it runs, its webhooks, the clocks). */
function operatorFindings(f: WhyFacts): Finding[] {
  const out: Finding[] = livenessFindings(f);
  const op = f.operator;
  const lease = op.lease;
  if (lease?.renewTime && lease.holder) {
    const ahead = new Date(lease.renewTime).getTime() - f.now.getTime();
    if (ahead > CLOCK_SKEW_MS) {
      out.push({
        cause: "clock-skew",
        summary: `the leader's clock is ${humanDuration(Math.round(ahead / SECOND))} ahead of the API server's`,
        evidence: [`Lease renewTime ${stamp(lease.renewTime)} is later than the API server's time ${iso(f.now)}`],
        fix: fixOf("clock-skew", { localClock: false }),
      });
    }
  }
  for (const w of op.webhooks) {
    if (w.readyEndpoints !== 0) continue;
    out.push({
      cause: "operator-webhook-failing",
      summary: `webhook ${w.name} has no ready endpoint (Service ${w.target})`,
      evidence: [
        `Service ${w.target} has 0 ready addresses: kubectl apply of a CronJob fails with "failed calling webhook"` +
          (w.name.startsWith("conversion/") ? ', and every API v2 request with "conversion webhook … failed"' : ""),
      ],
      fix: fixOf("operator-webhook-failing", {}),
    });
  }
  if (f.serverClock) {
    const skew = f.localNow.getTime() - f.now.getTime();
    // The Date header has whole seconds: a second of difference is rounding.
    if (Math.abs(skew) > CLOCK_SKEW_MS) {
      out.push({
        cause: "clock-skew",
        summary: `this machine's clock is ${humanDuration(Math.round(Math.abs(skew) / SECOND))} ${skew > 0 ? "ahead of" : "behind"} the API server's`,
        evidence: [`this machine: ${iso(f.localNow)}; the API server (Date header): ${iso(f.now)}`],
        fix: fixOf("clock-skew", { localClock: true }),
      });
    }
  }
  return out;
}

// --- Jobs and Pods -----------------------------------------------------------------------------------

function jobSpec(job: Readonly<Job>): {
  activeDeadlineSeconds?: number;
  backoffLimit?: number;
  restartPolicy?: string;
} {
  const spec = (job.spec ?? {}) as {
    activeDeadlineSeconds?: number;
    backoffLimit?: number;
    template?: { spec?: { restartPolicy?: string } };
  };
  return {
    ...(spec.activeDeadlineSeconds !== undefined ? { activeDeadlineSeconds: spec.activeDeadlineSeconds } : {}),
    ...(spec.backoffLimit !== undefined ? { backoffLimit: spec.backoffLimit } : {}),
    ...(spec.template?.spec?.restartPolicy ? { restartPolicy: spec.template.spec.restartPolicy } : {}),
  };
}

/** One line per Pod of the Job: its phase and what holds it. */
function podLines(pods: readonly PodFacts[]): string[] {
  return pods.map((p) => {
    const parts = [`Pod ${p.name}: ${p.phase ?? "?"}`];
    const sched = p.conditions.find((c) => c.type === "PodScheduled" && c.status === "False");
    if (sched) parts.push(`not scheduled (${sched.reason ?? "?"}: ${sched.message ?? ""})`);
    for (const c of p.containers) {
      if (c.waiting?.reason)
        parts.push(`${c.name} waiting: ${c.waiting.reason}${c.waiting.message ? ` (${c.waiting.message})` : ""}`);
      if (c.terminated)
        parts.push(`${c.name} terminated: ${c.terminated.reason ?? "?"}, exit code ${c.terminated.exitCode ?? "?"}`);
      if (c.restartCount > 0) {
        const last = c.lastTerminated;
        parts.push(
          `${c.name} restarted ${c.restartCount} times${last ? ` (last: ${last.reason ?? "?"}, exit code ${last.exitCode ?? "?"})` : ""}`,
        );
      }
    }
    return parts.join("; ");
  });
}

const PULL_ERRORS = new Set(["ErrImagePull", "ImagePullBackOff", "InvalidImageName", "ErrImageNeverPull"]);

/** What keeps a running Job's Pods from working, if something does. */
function podTrouble(
  job: Readonly<Job>,
  pods: readonly PodFacts[],
  events: WhyFacts["events"],
  now: Date,
): { cause: CauseId; summary: string; evidence: string[]; fix: string[] } | undefined {
  const name = job.metadata?.name ?? "";
  const namespace = job.metadata?.namespace ?? "";
  for (const p of pods) {
    for (const c of p.containers) {
      if (c.waiting?.reason && PULL_ERRORS.has(c.waiting.reason)) {
        return {
          cause: "image-pull",
          summary: `its Pod ${p.name} cannot pull its image (${c.waiting.reason})`,
          evidence: [
            `Pod ${p.name} container ${c.name}: ${c.waiting.reason}${c.waiting.message ? `: ${c.waiting.message}` : ""}`,
          ],
          fix: fixOf("image-pull", {}),
        };
      }
    }
    const unsched = p.conditions.find((c) => c.type === "PodScheduled" && c.status === "False");
    if (p.phase === "Pending" && unsched) {
      return {
        cause: "pods-unschedulable",
        summary: `its Pod ${p.name} is Pending: ${unsched.reason ?? "not scheduled"}`,
        evidence: [`Pod ${p.name}: PodScheduled=False, ${unsched.reason ?? ""}: ${unsched.message ?? ""}`],
        fix: fixOf("pods-unschedulable", {}),
      };
    }
    for (const c of p.containers) {
      if (c.waiting?.reason === "CrashLoopBackOff") {
        const last = c.lastTerminated;
        return {
          cause: "crash-looping",
          summary: `its Pod ${p.name} keeps crashing (CrashLoopBackOff, ${c.restartCount} restarts${last ? `, last exit code ${last.exitCode ?? "?"}${last.reason ? ` ${last.reason}` : ""}` : ""})`,
          evidence: podLines([p]),
          fix: fixOf("crash-looping", { namespace, pod: p.name }),
        };
      }
    }
  }
  const created = job.metadata?.creationTimestamp ? new Date(job.metadata.creationTimestamp) : undefined;
  // The Job controller counts the Pods it made: none seen but some counted means they could not be read (a 403 on
  // pods) or are gone, not that none was created.
  const counts = (job.status ?? {}) as { active?: number; ready?: number; succeeded?: number; failed?: number };
  const counted = (counts.active ?? 0) + (counts.ready ?? 0) + (counts.succeeded ?? 0) + (counts.failed ?? 0);
  if (pods.length === 0 && counted === 0 && created && now.getTime() - created.getTime() > NO_POD_GRACE_MS) {
    const failed = events.filter((e) => e.object === `Job/${name}` && e.reason === "FailedCreate");
    return {
      cause: "pods-not-created",
      summary: `its Job ${name} has no Pod ${ago(created, now)} after its creation`,
      evidence: failed.length
        ? failed.map(
            (e) => `Event FailedCreate on Job ${name} (${e.count}×, last ${e.last ?? "?"}): ${e.message ?? ""}`,
          )
        : [
            `Job ${name} has no Pods (status: 0 active, 0 succeeded, 0 failed) and no FailedCreate Event is left to say why (Events expire after an hour)`,
          ],
      fix: fixOf("pods-not-created", {}),
    };
  }
  return undefined;
}

/** Why a failed Job failed: its condition, and its Pods' terminations while they exist. */
function failureEvidence(job: Readonly<Job>, pods: readonly PodFacts[]): { reason: string; evidence: string[] } {
  const c = job.status?.conditions?.find((x) => x.type === "Failed" && x.status === "True");
  const evidence = [`Job ${job.metadata?.name}: Failed, ${c?.reason ?? "?"}${c?.message ? `: ${c.message}` : ""}`];
  let reason = c?.reason ?? "Failed";
  for (const p of pods) {
    for (const ct of p.containers) {
      const t = ct.terminated ?? ct.lastTerminated;
      if (t?.reason === "OOMKilled") reason = `${reason}, ${ct.name} OOMKilled`;
      else if (t && t.exitCode !== undefined && t.exitCode !== 0 && !reason.includes("exit code"))
        reason = `${reason}, ${ct.name} exit code ${t.exitCode}`;
    }
  }
  evidence.push(...podLines(pods));
  return { reason, evidence };
}

/** What keeps a running Job alive, in words: its age and its bounds. */
function keptAlive(job: Readonly<Job>, pods: readonly PodFacts[], now: Date): { text: string; evidence: string[] } {
  const spec = jobSpec(job);
  const started = job.status?.startTime ?? job.metadata?.creationTimestamp;
  const age = started ? ago(new Date(started), now) : "?";
  const bounds = [
    spec.activeDeadlineSeconds === undefined
      ? "activeDeadlineSeconds unset"
      : `activeDeadlineSeconds ${spec.activeDeadlineSeconds}`,
    `backoffLimit ${spec.backoffLimit ?? 6}${spec.backoffLimit === undefined ? " (default)" : ""}`,
  ];
  const restarts = pods.reduce((n, p) => n + p.containers.reduce((m, c) => m + c.restartCount, 0), 0);
  const crash = pods.some((p) => p.containers.some((c) => c.waiting?.reason === "CrashLoopBackOff"));
  if (crash) bounds.push(`its Pods in CrashLoopBackOff, ${restarts} restarts`);
  const failed = (job.status as { failed?: number } | undefined)?.failed ?? 0;
  if (failed > 0) bounds.push(`${failed} failed Pods so far`);
  return {
    text: `has been running for ${age} (${bounds.join(", ")})`,
    evidence: [
      `Job ${job.metadata?.name}: started ${started ?? "?"}, ${bounds.join(", ")}` +
        ((spec.backoffLimit ?? 6) > 0
          ? `; its retries alone can take ${humanDuration(worstCaseRetrySeconds(spec.backoffLimit ?? 6, spec.restartPolicy))} (${retryBackoffWords(spec.restartPolicy)})`
          : ""),
      ...podLines(pods),
    ],
  };
}

// --- the slot ------------------------------------------------------------------------------------------

interface SlotContext {
  f: WhyFacts;
  cronJob: CronJob;
  name: string;
  namespace: string;
  zone: string;
  slot: Date;
  slotText: string;
  podsOf: (job: string) => PodFacts[];
  jobNamed: (job: string) => Readonly<Job> | undefined;
}

type Verdict = Pick<Diagnosis, "status" | "verdict" | "cause" | "evidence" | "fix">;

/** A verdict naming a cause; its fix is the cause's row said with `fix`'s names. */
const found = <I extends CauseId>(cause: I, verdict: string, evidence: string[], fix: FixParamsOf<I>): Verdict => ({
  status: "cause",
  verdict,
  cause,
  evidence,
  fix: fixOf(cause, fix),
});

function entryLine(e: RecentRun): string {
  const parts = [
    `status.recentRuns: ${e.scheduledTime ? stamp(e.scheduledTime) : (e.request ?? "")} ${e.trigger} ${e.decision} (${e.reason})`,
  ];
  parts.push(`decided ${stamp(e.decidedAt)}`);
  if (e.job) parts.push(`Job ${e.job}`);
  if (e.blockedBy) parts.push(`behind Job ${e.blockedBy}`);
  if (e.outcome)
    parts.push(
      `ended ${e.outcome.result}${e.outcome.reason ? ` (${e.outcome.reason})` : ""}${e.outcome.finishedAt ? ` at ${stamp(e.outcome.finishedAt)}` : ""}`,
    );
  if (e.message) parts.push(e.message);
  return parts.join(", ");
}

/** The verdict on a Job that ran the slot (found live, or only in the record). */
function ranVerdict(c: SlotContext, job: Readonly<Job> | undefined, entry: RecentRun | undefined): Verdict {
  const { f, slotText: when } = c;
  const evidence = entry ? [entryLine(entry)] : [];
  const name = job?.metadata?.name ?? entry?.job ?? "";
  const created = job?.metadata?.creationTimestamp ?? entry?.decidedAt;
  const startedLate = created ? ` (created ${secondsBetween(c.slot, new Date(created))} s after the slot)` : "";
  if (!job) {
    const o = entry?.outcome;
    if (o?.result === OutcomeResult.Complete) {
      const took =
        o.finishedAt && created
          ? `Complete in ${humanDuration(secondsBetween(new Date(created), new Date(o.finishedAt)))}`
          : "Complete";
      return { status: "healthy", verdict: `ran at ${when}: Job ${name}${startedLate}, ${took}`, evidence, fix: [] };
    }
    if (o?.result === OutcomeResult.Failed) {
      return found(
        "job-failed",
        `ran at ${when} and failed: Job ${name} ${o.reason ?? "Failed"}${o.message ? ` (${o.message})` : ""}`,
        [...evidence, `Job ${name} is gone (history cleanup): its Pods' details went with it`],
        {
          namespace: c.namespace,
          job: name,
          oomKilled: false,
          deadlineExceeded: o.reason === "DeadlineExceeded",
        },
      );
    }
    return {
      status: "unknown",
      verdict: `ran at ${when} (Job ${name}), but the Job is gone and the record has no outcome for it`,
      evidence: [...evidence, `no Job named ${name} in ${c.namespace}: deleted before it ended, or by hand`],
      fix: [],
    };
  }
  const pods = c.podsOf(name);
  evidence.push(`Job ${name}: created ${created ?? "?"}${startedLate}`);
  const kind = classifyJob(job);
  if (kind === "successful") {
    const start = job.status?.startTime ?? created;
    const end = finishedAt(job);
    const took = start && end ? ` in ${humanDuration(secondsBetween(new Date(start), end))}` : "";
    return {
      status: "healthy",
      verdict: `ran at ${when}: Job ${name}${startedLate}, Complete${took}`,
      evidence,
      fix: [],
    };
  }
  if (kind === "failed") {
    const why = failureEvidence(job, pods);
    return found("job-failed", `ran at ${when} and failed: Job ${name} ${why.reason}`, [...evidence, ...why.evidence], {
      namespace: c.namespace,
      job: name,
      oomKilled: why.reason.includes("OOMKilled"),
      deadlineExceeded: why.reason.startsWith("DeadlineExceeded"),
    });
  }
  const trouble = podTrouble(job, pods, f.events, f.now);
  if (trouble) {
    return {
      status: "cause",
      cause: trouble.cause,
      verdict: `started at ${when} but never got to work: ${trouble.summary}`,
      evidence: [...evidence, ...trouble.evidence],
      fix: trouble.fix,
    };
  }
  const alive = keptAlive(job, pods, f.now);
  return {
    status: "healthy",
    verdict: `ran at ${when}: Job ${name}${startedLate} ${alive.text}`,
    evidence: [...evidence, ...alive.evidence],
    fix: [],
  };
}

/**
 * Why the operator reached a slot late: a leader change, its Pods starting, or load (the record's lags). `because`:
 * the causes found, in words for the verdict; `evidence`: the times they rest on.
 */
function lateness(c: SlotContext, decidedAt: Date): { because: string[]; evidence: string[] } {
  const because: string[] = [];
  const evidence: string[] = [];
  const lease = c.f.operator.lease;
  const late = secondsBetween(c.slot, decidedAt);
  evidence.push(`the operator decided at ${iso(decidedAt)}, ${humanDuration(late)} after the slot`);
  if (
    lease?.acquireTime &&
    new Date(lease.acquireTime) > c.slot &&
    new Date(lease.acquireTime) <= new Date(decidedAt.getTime() + 60 * SECOND)
  ) {
    // The Lease keeps only its newest acquisition: it shows that no replica held it from before the slot until
    // then, not why (a leader lost, a restart, every replica paused), nor any earlier gap.
    const transitions = lease.transitions === undefined ? "" : `; ${plural(lease.transitions, "leader change")} in all`;
    because.push(
      `no replica led from before the slot until ${stamp(lease.acquireTime)}, when ${lease.holder ?? "?"} took the Lease`,
    );
    evidence.push(
      `Lease ${c.f.operator.namespace}/${c.f.operator.leaseName}: ${lease.holder ?? "?"} acquired it at ${stamp(lease.acquireTime)}, after the slot${transitions}. The Lease shows only its newest acquisition: that no replica held it until then (a leader lost, a restart, or every replica paused), not which`,
    );
  }
  const started = (c.f.operator.pods ?? [])
    .map((p) => p.created)
    .filter((t): t is string => !!t && new Date(t) > c.slot && new Date(t) <= decidedAt);
  if (started.length) {
    because.push(
      `the operator restarted: ${started.length > 1 ? `its Pods started at ${started.join(", ")}` : `its Pod started at ${started[0]}`}, after the slot`,
    );
    evidence.push(`operator Pods started after the slot: ${started.join(", ")}`);
  }
  return { because, evidence };
}

/** The lags (seconds from slot to Job creation) the record shows for recent scheduled runs. */
function observedLags(cronJob: CronJob): number[] {
  return (cronJob.status?.recentRuns ?? [])
    .filter(
      (e) =>
        (e.decision === RecordDecision.Created || e.decision === RecordDecision.Adopted) &&
        e.trigger === RecordTrigger.Schedule &&
        e.scheduledTime,
    )
    .map((e) => secondsBetween(new Date(e.scheduledTime!), new Date(e.decidedAt)));
}

/** What each reason of a Skipped entry means (api/v1 SKIPPED_REASONS, as the reconciler writes them). */
const SKIP_REASONS: Record<string, string> = Object.fromEntries(
  SKIPPED_REASONS.map((r) => [r, RECORD_REASONS[r].description]),
);

function recordVerdict(c: SlotContext, e: RecentRun): Verdict {
  const { cronJob, slotText: when, f } = c;
  const evidence = [entryLine(e)];
  const deadline = cronJob.spec?.startingDeadlineSeconds;
  switch (e.decision) {
    case RecordDecision.Created:
    case RecordDecision.Adopted:
      return ranVerdict(c, e.job ? c.jobNamed(e.job) : undefined, e);
    case RecordDecision.Held: {
      const blocker = e.blockedBy ? c.jobNamed(e.blockedBy) : undefined;
      if (!blocker || classifyJob(blocker) !== "active") {
        return found(
          "forbid-held",
          `did not run at ${when}: concurrencyPolicy Forbid and Job ${e.blockedBy ?? "?"} was still running`,
          [...evidence, blocker ? `Job ${e.blockedBy} has ended since` : `Job ${e.blockedBy} is gone`],
          { namespace: c.namespace, job: e.blockedBy ?? "", running: false, noActiveDeadline: true },
        );
      }
      const alive = keptAlive(blocker, c.podsOf(e.blockedBy!), f.now);
      return found(
        "forbid-held",
        `did not run at ${when}: concurrencyPolicy Forbid and Job ${e.blockedBy} ${alive.text}; it will not run until that Job ends`,
        [...evidence, ...alive.evidence],
        {
          namespace: c.namespace,
          job: e.blockedBy!,
          running: true,
          noActiveDeadline: jobSpec(blocker).activeDeadlineSeconds === undefined,
        },
      );
    }
    case RecordDecision.Missed: {
      const decided = new Date(e.decidedAt);
      if (e.blockedBy) {
        const blocker = c.jobNamed(e.blockedBy);
        const alive =
          blocker && classifyJob(blocker) === "active" ? keptAlive(blocker, c.podsOf(e.blockedBy), f.now) : undefined;
        return found(
          "forbid-held",
          `did not run at ${when}: held by concurrencyPolicy Forbid behind Job ${e.blockedBy} until startingDeadlineSeconds (${deadline ?? "?"}) passed${alive ? `; that Job ${alive.text}` : ""}`,
          [...evidence, ...(alive?.evidence ?? [])],
          { namespace: c.namespace, job: e.blockedBy, running: alive !== undefined, noActiveDeadline: true },
        );
      }
      const why = lateness(c, decided);
      const late = secondsBetween(c.slot, decided);
      const lags = observedLags(cronJob);
      // The operator was away (a leader change, a restart after the slot): the deadline did its job. Otherwise a slot
      // reached within the operator's usual reaction (its recent lags, or a few seconds) was lost to a deadline too
      // short for it.
      const away = why.because.length > 0;
      const usual = Math.max(USUAL_LAG_S, ...lags);
      if (!away && deadline !== undefined && late <= usual) {
        return found(
          "deadline-shorter-than-lag",
          `did not run at ${when}: startingDeadlineSeconds ${deadline} is shorter than the operator's lag: it reached the slot ${late} s after it${lags.length ? ` (recent runs started ${lags.join(", ")} s after their slot)` : ""}`,
          [...evidence, ...why.evidence],
          {},
        );
      }
      return found(
        "deadline-missed",
        `did not run at ${when}: the operator reached it ${humanDuration(late)} late, past startingDeadlineSeconds ${deadline ?? "?"}${away ? `, because ${why.because.join(", and ")}` : " (no leader change or restart is on record: it was overloaded, or down without a trace left)"}`,
        [...evidence, ...why.evidence],
        { name: c.name, namespace: c.namespace, slot: iso(c.slot) },
      );
    }
    case RecordDecision.Skipped: {
      // The policy that decided is the entry's (the spec may have changed since; RunLatest skips nothing).
      const policy = SKIP_REASONS[e.reason] ?? `missedRunPolicy chose not to run it`;
      const now = cronJob.spec?.missedRunPolicy ?? "RunLatest";
      return found(
        "policy-skipped",
        `did not run at ${when}: ${policy} (${e.reason})`,
        [
          ...evidence,
          ...(SKIP_REASONS[e.reason] && !SKIP_REASONS[e.reason]!.includes(`missedRunPolicy ${now} `)
            ? [`spec.missedRunPolicy is ${now} now (changed since the decision)`]
            : []),
        ],
        { name: c.name, namespace: c.namespace, slot: iso(c.slot) },
      );
    }
    case RecordDecision.Refused:
      return refusedVerdict(c, e, evidence);
    case RecordDecision.Stopped:
      return stoppedVerdict(c);
  }
}

function refusedVerdict(c: SlotContext, e: RecentRun, evidence: string[]): Verdict {
  const { slotText: when, f } = c;
  const msg = e.message ?? "";
  if (e.reason === RefusedReason.AlreadyExists) {
    const foreign = f.foreignJobs[0];
    const owner = foreign?.metadata?.ownerReferences?.find((r) => r.controller);
    return found(
      "create-refused-name-taken",
      `did not run at ${when}: ${msg || "a Job that is not this CronJob's holds the slot's name"}`,
      [
        ...evidence,
        ...(foreign
          ? [`Job ${foreign.metadata?.name}: ${owner ? `controlled by ${owner.kind} ${owner.name}` : "no controller"}`]
          : []),
      ],
      {},
    );
  }
  if (/exceeded quota/i.test(msg)) {
    const quotas = f.quotas.map(
      (q) =>
        `ResourceQuota ${q.name}: ${Object.entries(q.hard)
          .map(([k, v]) => `${k} ${q.used[k] ?? "?"}/${v}`)
          .join(", ")}`,
    );
    return found(
      "create-refused-quota",
      `did not run at ${when}: the API server refused its Job: ${msg}`,
      [...evidence, ...quotas],
      {},
    );
  }
  if (/admission webhook|denied the request|violates PodSecurity|denied by/i.test(msg)) {
    return found(
      "create-refused-admission",
      `did not run at ${when}: the API server refused its Job: ${msg}`,
      evidence,
      {},
    );
  }
  return found(
    "create-refused",
    `did not run at ${when}: the API server refused its Job (${e.reason}): ${msg}`,
    evidence,
    { name: c.name, namespace: c.namespace },
  );
}

function stoppedVerdict(c: SlotContext): Verdict {
  const st = c.cronJob.status?.stopped;
  const failed = (c.cronJob.status?.recentRuns ?? []).filter((e) => e.outcome?.result === OutcomeResult.Failed);
  return found(
    "stopped-after-failures",
    `did not run at ${c.slotText}: scheduling stopped at ${st?.time ?? "?"} after ${st?.failures ?? "?"} failed runs in a row (spec.stopAfterConsecutiveFailures ${c.cronJob.spec?.stopAfterConsecutiveFailures ?? "?"})`,
    [
      `status.stopped: ${JSON.stringify(st ?? {})}`,
      ...failed
        .slice(0, 3)
        .map(
          (e) =>
            `Job ${e.job ?? "?"} failed: ${e.outcome?.reason ?? "?"}${e.outcome?.message ? ` (${e.outcome.message})` : ""}`,
        ),
    ],
    { name: c.name, namespace: c.namespace },
  );
}

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

/** No decision about the slot and no Job for it: what the CronJob's state and the operator's say. */
function undecidedVerdict(c: SlotContext, operator: Finding[]): Verdict {
  const { cronJob, slotText: when, f } = c;
  if (cronJob.spec?.suspend) {
    const by = suspendedBy(cronJob);
    return found(
      "suspended",
      `did not run at ${when}: the CronJob is suspended${by ? ` (spec.suspend set by ${by})` : ""}`,
      [`spec.suspend: true${by ? `; managedFields: ${by}` : ""}`],
      { name: c.name, namespace: c.namespace },
    );
  }
  if (cronJob.status?.stopped) return stoppedVerdict(c);
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
function futureVerdict(c: SlotContext, operator: Finding[]): Verdict {
  if (c.cronJob.spec?.suspend || c.cronJob.status?.stopped) {
    const v = undecidedVerdict(c, operator);
    return { ...v, verdict: v.verdict.replace(/^did not run at/, "will not run at") };
  }
  return {
    status: "healthy",
    verdict: `${c.slotText} has not come yet (in ${ago(c.f.now, c.slot)})`,
    evidence: [`the API server's time is ${iso(c.f.now)}`],
    fix: [],
  };
}

/** The asked time is not a slot: the slots around it, in the zone and UTC, with DST and H spelled out. */
function notASlot(c: SlotContext, schedules: CronJobSchedules, anchor: Date | undefined): Verdict {
  const before = schedules.schedule.mostRecent(c.slot, anchor);
  const after = schedules.schedule.next(c.slot, anchor);
  const around = nextRuns(schedules, anchor, new Date((before ?? c.slot).getTime() - 1), before ? 2 : 1);
  const lines = around.map((t) => `slot ${t.time} (${t.utc})${t.note ? `: ${t.note}` : ""}`);
  const resolved = schedules.entries.map(
    (e) =>
      `${e.schedule}${e.resolvedSchedule !== e.schedule ? ` → ${e.resolvedSchedule} (H resolved)` : ""} in ${e.timeZone ?? "UTC"}`,
  );
  return found(
    "not-a-slot",
    `${c.slotText} is not a time this CronJob runs: the nearest slots are ${before ? `${slotText(before, c.zone)} and ` : ""}${slotText(after, c.zone)}`,
    [`schedule: ${resolved.join("; ")}`, ...lines],
    { name: c.name, namespace: c.namespace },
  );
}

/** What may keep the next slot from running. */
function nextBlocker(f: WhyFacts, operator: Finding[]): string | undefined {
  const cj = f.cronJob;
  if (cj.spec?.suspend) return "suspended: it will not run until resumed";
  if (cj.status?.stopped) return "stopped after failures: it will not run until resumed";
  if (cj.spec?.concurrencyPolicy === "Forbid") {
    const running = f.jobs.filter((j) => classifyJob(j) === "active").map((j) => j.metadata?.name);
    if (running.length) return `concurrencyPolicy Forbid: it will not run while ${running.join(", ")} runs`;
  }
  const down = operator.find((x) => x.cause === "operator-down" || x.cause === "operator-no-leader");
  if (down) return `${down.summary}: nothing runs until it is back`;
  return undefined;
}

/** Risks the record shows even when the slot ran. */
function risks(f: WhyFacts, verdictCause: CauseId | undefined): Finding[] {
  const out: Finding[] = [];
  const cj = f.cronJob;
  const deadline = cj.spec?.startingDeadlineSeconds;
  const lags = observedLags(cj);
  const worst = lags.length ? Math.max(...lags) : undefined;
  if (
    deadline !== undefined &&
    worst !== undefined &&
    worst > deadline * LAG_SHARE &&
    verdictCause !== "deadline-shorter-than-lag"
  ) {
    out.push({
      cause: "deadline-shorter-than-lag",
      summary: `startingDeadlineSeconds ${deadline} leaves little room: recent runs started up to ${worst} s after their slot`,
      evidence: [`lags in status.recentRuns: ${lags.join(", ")} s`],
      fix: fixOf("deadline-shorter-than-lag", {}),
    });
  }
  const request = runNowRequestOf(cj);
  if (request && request !== cj.status?.lastRunNowRequest && verdictCause !== "run-now-waiting") {
    const running = f.jobs.filter((j) => classifyJob(j) === "active").map((j) => j.metadata?.name ?? "");
    if (running.length && cj.spec?.concurrencyPolicy !== "Allow") {
      out.push({
        cause: "run-now-waiting",
        summary: `run-now request "${request}" waits: ${running.join(", ")} still running (concurrencyPolicy ${cj.spec?.concurrencyPolicy})`,
        evidence: [
          `annotation run-now: ${request}; status.lastRunNowRequest: ${cj.status?.lastRunNowRequest ?? "(none)"}; its Job would be ${manualJobName(cj.metadata?.name ?? "", request)}`,
        ],
        fix: fixOf("run-now-waiting", { namespace: cj.metadata?.namespace ?? "", job: running.join(" ") }),
      });
    }
  }
  return out;
}

/**
 * The diagnosis of one CronJob: about `slot` when given (the user's question), else the latest slot that should
 * have run (one just due and not yet decided about yields to the one before it).
 */
export function diagnose(f: WhyFacts, o: { slot?: Date } = {}): Diagnosis {
  const cronJob = f.cronJob;
  const name = cronJob.metadata?.name ?? "";
  const namespace = cronJob.metadata?.namespace ?? "";
  const zone = zoneOf(cronJob);
  const operator = operatorFindings(f);
  const base = { cronJob: { namespace, name }, unreadable: f.unreadable };
  const jobsByName = new Map(f.jobs.map((j) => [j.metadata?.name ?? "", j]));
  const schedules = schedulesOf(cronJob);
  const finish = (
    d: Omit<Diagnosis, "exitCode" | "also" | "unreadable" | "cronJob">,
    extra: Finding[] = [],
  ): Diagnosis => {
    const also = [...operator, ...extra].filter((x) => x.cause !== d.cause);
    const exitCode =
      d.status === "cause" || also.some((x) => !x.unsure) ? 1 : d.status === "unknown" || also.length ? 2 : 0;
    return { ...base, ...d, also, exitCode };
  };
  if (!schedules) {
    const cond = cronJob.status?.conditions?.find((x) => x.type === "Available" && x.status === "False");
    return finish({
      status: "cause",
      cause: "invalid-schedule",
      verdict: `never runs: its schedule cannot be used${cond ? ` (${cond.message})` : ""}`,
      evidence: [
        `spec.schedule: ${JSON.stringify(cronJob.spec?.schedule)}; spec.timeZone: ${JSON.stringify(cronJob.spec?.timeZone ?? "UTC")}`,
        ...(cond ? [`condition Available=False ${cond.reason ?? "?"}: ${cond.message ?? ""}`] : []),
      ],
      fix: fixOf("invalid-schedule", {}),
    });
  }
  const anchor = anchorOf(cronJob, schedules);
  const entryFor = (slot: Date) =>
    (cronJob.status?.recentRuns ?? []).find(
      (e) =>
        e.scheduledTime !== undefined &&
        Date.parse(e.scheduledTime) === slot.getTime() &&
        e.trigger !== RecordTrigger.Backfill,
    ) ??
    (cronJob.status?.recentRuns ?? []).find(
      (e) => e.scheduledTime !== undefined && Date.parse(e.scheduledTime) === slot.getTime(),
    );
  const jobFor = (slot: Date) =>
    jobsByName.get(jobNameFor(name, slot)) ?? f.jobs.find((j) => scheduledTimeOf(j)?.getTime() === slot.getTime());

  // The newest slot at or before t. `@every` counts from its anchor (the last run), which mostRecent does not look
  // behind: the last run is a slot too.
  const lastRun = cronJob.status?.lastScheduleTime ? new Date(cronJob.status.lastScheduleTime) : undefined;
  // Only an `@every` member counts from the last run; a cron schedule's last run may be another schedule's slot
  // (the spec changed since).
  const everyMember = schedules.schedule.set.members.some((m) => m.schedule.isEvery);
  const latest = (t: Date): Date | undefined => {
    const recent = schedules.schedule.mostRecent(t, anchor);
    const ran = lastRun && lastRun <= t && everyMember ? lastRun : undefined;
    return recent && (!ran || recent > ran) ? recent : ran;
  };
  const isSlot = (t: Date) =>
    latest(t)?.getTime() === t.getTime() ||
    entryFor(t) !== undefined ||
    jobFor(t) !== undefined ||
    (created !== undefined && schedules.schedule.mostRecent(t, created)?.getTime() === t.getTime());
  const created = cronJob.metadata?.creationTimestamp ? new Date(cronJob.metadata.creationTimestamp) : undefined;
  let slot = o.slot ?? latest(f.now);
  if (!o.slot && slot && !entryFor(slot) && !jobFor(slot) && f.now.getTime() - slot.getTime() < JUST_DUE_MS) {
    slot = latest(new Date(slot.getTime() - 1)) ?? slot;
  }
  const nextAt = schedules.schedule.next(f.now, anchor);
  const nextNote = nextRuns(schedules, anchor, new Date(nextAt.getTime() - 1), 1)[0]?.note;
  const blocked = nextBlocker(f, operator);
  const nextFrom = slotSource(schedules, nextAt, anchor, zone);
  const next = {
    utc: iso(nextAt),
    local: rfc3339InZone(nextAt, nextFrom.zone),
    text: `${slotText(nextAt, nextFrom.zone)}${nextFrom.words}`,
    ...(nextNote ? { note: nextNote } : {}),
    ...(blocked ? { blocked } : {}),
  };
  if (!slot || (!o.slot && created && slot < created)) {
    const verdict = cronJob.spec?.suspend
      ? undecidedVerdict(ctx(f, name, namespace, nextFrom, nextAt, jobsByName), operator)
      : {
          status: "healthy" as const,
          verdict: `has had no slot since its creation; the first is ${next.text}`,
          evidence: [],
          fix: [],
        };
    return finish({ ...verdict, next }, risks(f, verdict.cause));
  }
  const from = slotSource(schedules, slot, anchor, zone);
  const c = ctx(f, name, namespace, from, slot, jobsByName);
  const slotNote = nextRuns(schedules, anchor, new Date(slot.getTime() - 1), 1)[0];
  const slotView = {
    utc: iso(slot),
    local: rfc3339InZone(slot, from.zone),
    timeZone: from.zone,
    ...(from.schedules ? { schedules: from.schedules } : {}),
    ...(slotNote?.note && slotNote.utc === iso(slot) ? { note: slotNote.note } : {}),
  };
  let verdict: Verdict;
  if (o.slot && !isSlot(o.slot)) {
    verdict = notASlot(c, schedules, anchor);
  } else if (created && slot < created) {
    verdict = found(
      "before-creation",
      `did not run at ${c.slotText}: the CronJob was created later, at ${iso(created)}`,
      [`metadata.creationTimestamp: ${iso(created)}`],
      { name, namespace, slot: iso(slot) },
    );
  } else {
    const entry = entryFor(slot);
    const job = jobFor(slot);
    verdict = job
      ? ranVerdict(c, job, entry)
      : entry
        ? recordVerdict(c, entry)
        : slot > f.now
          ? futureVerdict(c, operator)
          : undecidedVerdict(c, operator);
  }
  // An H field runs at a minute the user may not expect: say which.
  const hashed =
    verdict.cause === "not-a-slot" ? [] : schedules.entries.filter((e) => e.resolvedSchedule !== e.schedule);
  const evidence = [
    ...verdict.evidence,
    ...hashed.map(
      (e) =>
        `schedule ${JSON.stringify(e.schedule)} runs as ${JSON.stringify(e.resolvedSchedule)} (H hashed from ${namespace}/${name})`,
    ),
  ];
  return finish({ ...verdict, evidence, slot: slotView, next }, risks(f, verdict.cause));
}

function ctx(
  f: WhyFacts,
  name: string,
  namespace: string,
  from: SlotSource,
  slot: Date,
  jobsByName: Map<string, Readonly<Job>>,
): SlotContext {
  return {
    f,
    cronJob: f.cronJob,
    name,
    namespace,
    zone: from.zone,
    slot,
    slotText: `${slotText(slot, from.zone)}${from.words}`,
    podsOf: (job) => f.pods.filter((p) => p.job === job),
    jobNamed: (job) => jobsByName.get(job),
  };
}

/** The diagnosis as the command prints it. */
export function whyText(d: Diagnosis): string {
  const lines = [`${d.cronJob.namespace}/${d.cronJob.name}: ${d.verdict}`];
  if (d.slot?.note) lines.push(`  (${d.slot.note})`);
  if (d.evidence.length) lines.push("Evidence:", ...d.evidence.map((e) => `  - ${e}`));
  if (d.fix.length) lines.push("Fix:", ...d.fix.map((x) => `  - ${x}`));
  if (d.next) {
    lines.push(
      `Next: ${d.next.text}${d.next.note ? ` (${d.next.note})` : ""}${d.next.blocked ? `; ${d.next.blocked}` : ""}`,
    );
  }
  for (const a of d.also) {
    lines.push(
      `Also: ${a.summary} [${a.cause}]`,
      ...a.evidence.map((e) => `  - ${e}`),
      ...a.fix.map((x) => `  fix: ${x}`),
    );
  }
  if (d.unreadable.length) lines.push(`Could not read: ${d.unreadable.join("; ")}`);
  return `${lines.join("\n")}\n`;
}

/** One line per CronJob that needs attention (namespace or -A). */
export function whyListText(ds: readonly Diagnosis[], allNamespaces: boolean): string {
  const attention = ds.filter((d) => d.exitCode !== 0);
  if (attention.length === 0) return `all ${ds.length} CronJobs ran as scheduled\n`;
  return (
    attention
      .map((d) => {
        const who = allNamespaces ? `${d.cronJob.namespace}/${d.cronJob.name}` : d.cronJob.name;
        const cause = d.cause ?? d.also[0]?.cause ?? "unknown";
        const text = d.status === "healthy" && d.also[0] ? d.also[0].summary : d.verdict;
        return `${who}\t${cause}\t${text}`;
      })
      .join("\n") + "\n"
  );
}
