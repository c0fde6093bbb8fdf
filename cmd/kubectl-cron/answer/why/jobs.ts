// A Job and its Pods, in words: what keeps a running Job's Pods from working (image-pull, pods-unschedulable,
// crash-looping, pods-not-created), why a failed Job failed, what keeps a running Job alive.
import { type Job, retryBackoffWords, runningSince, worstCaseRetrySeconds } from "../../../../api/v1/index.ts";
import { humanDuration, iso } from "../../model/time.ts";
import type { PodFacts, WhyFacts } from "../../model/facts.ts";
import { ago, found, SECOND, type Verdict } from "./verdict.ts";

/** A Job with no Pod for this long after its creation never got one. */
const NO_POD_GRACE_MS = 60 * SECOND;

export function jobSpec(job: Readonly<Job>): {
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

/** What keeps a running Job's Pods from working, if something does: the verdict on the slot (`when`, in words). */
export function podTrouble(
  job: Readonly<Job>,
  pods: readonly PodFacts[],
  events: WhyFacts["events"],
  now: Date,
  when: string,
): Verdict | undefined {
  const name = job.metadata?.name ?? "";
  const namespace = job.metadata?.namespace ?? "";
  for (const p of pods) {
    for (const c of p.containers) {
      if (c.waiting?.reason && PULL_ERRORS.has(c.waiting.reason)) {
        return found("image-pull", { when, pod: p.name, reason: c.waiting.reason }, [
          `Pod ${p.name} container ${c.name}: ${c.waiting.reason}${c.waiting.message ? `: ${c.waiting.message}` : ""}`,
        ]);
      }
    }
    const unsched = p.conditions.find((c) => c.type === "PodScheduled" && c.status === "False");
    if (p.phase === "Pending" && unsched) {
      return found("pods-unschedulable", { when, pod: p.name, ...(unsched.reason ? { reason: unsched.reason } : {}) }, [
        `Pod ${p.name}: PodScheduled=False, ${unsched.reason ?? ""}: ${unsched.message ?? ""}`,
      ]);
    }
    for (const c of p.containers) {
      if (c.waiting?.reason === "CrashLoopBackOff") {
        const last = c.lastTerminated;
        return found(
          "crash-looping",
          {
            when,
            namespace,
            pod: p.name,
            restarts: String(c.restartCount),
            ...(last
              ? { exitCode: String(last.exitCode ?? "?"), ...(last.reason ? { reason: last.reason } : {}) }
              : {}),
          },
          podLines([p]),
        );
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
    return found(
      "pods-not-created",
      { when, job: name, age: ago(created, now) },
      failed.length
        ? failed.map(
            (e) => `Event FailedCreate on Job ${name} (${e.count}×, last ${e.last ?? "?"}): ${e.message ?? ""}`,
          )
        : [
            `Job ${name} has no Pods (status: 0 active, 0 succeeded, 0 failed) and no FailedCreate Event is left to say why (Events expire after an hour)`,
          ],
    );
  }
  return undefined;
}

/** Why a failed Job failed: its condition, and its Pods' terminations while they exist. */
export function failureEvidence(job: Readonly<Job>, pods: readonly PodFacts[]): { reason: string; evidence: string[] } {
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

/** What keeps a running Job alive: its age and its bounds, in words. */
export function keptAlive(
  job: Readonly<Job>,
  pods: readonly PodFacts[],
  now: Date,
): { age: string; bounds: string; evidence: string[] } {
  const spec = jobSpec(job);
  const started = runningSince(job);
  const age = started ? ago(started, now) : "?";
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
    age,
    bounds: bounds.join(", "),
    evidence: [
      `Job ${job.metadata?.name}: started ${started ? iso(started) : "?"}, ${bounds.join(", ")}` +
        ((spec.backoffLimit ?? 6) > 0
          ? `; its retries alone can take ${humanDuration(worstCaseRetrySeconds(spec.backoffLimit ?? 6, spec.restartPolicy))} (${retryBackoffWords(spec.restartPolicy)})`
          : ""),
      ...podLines(pods),
    ],
  };
}
