// The operator itself, from what it shows wherever it runs: its Pods and Deployment, its Lease, the record's newest
// decision (operator-down, operator-no-leader, operator-unclear), the instance its namespace's claim names
// (instance-down, claim.ts), its webhooks and the clocks.
import { humanDuration, iso } from "../../model/time.ts";
import type { OperatorFacts, WhyFacts } from "../../model/facts.ts";
import { claimFinding, runByOf } from "./claim.ts";
import { ago, fact, type Found, plural, SECOND, stamp } from "./verdict.ts";

/** Clocks further apart than this are reported. */
const CLOCK_SKEW_MS = 5 * SECOND;
/** A decision in the record this recent shows the operator at work now, when nothing says since when it is down. */
const RECENT_DECISION_MS = 3 * 60 * SECOND;

/** What one of the operator's signs shows: up or down, in words, and since when it is down (when it says). */
interface Sign {
  up: boolean;
  text: string;
  since?: Date;
}

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
  // One that could not be read says nothing (it is among what could not be read), not that there is none.
  if (op.leaseUnread) return undefined;
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
    claim: "the namespace's claim",
    webhook: "its webhooks' Service",
    label: "its Pods' labels",
    default: "the default install",
  }[op.foundBy];
  return `looked for its Pods and Deployment (${op.selector}) and ${op.leaseName} in ${op.namespace} (from ${how})`;
}

/**
 * What the operator shows of itself, for a verdict that asks whether it is at work (up signs, or where it was looked
 * for), and which install runs `namespace` by its claim, when that was read.
 */
export function operatorTrace(op: OperatorFacts, now: Date, namespace: string): string[] {
  const runBy = runByOf(op, namespace, now);
  const claim = runBy ? [`run by: ${runBy.text}`] : [];
  const signs = [podsSign(op), leaseSign(op, now), recordSign(op, now, undefined)].filter((x): x is Sign => !!x);
  if (signs.length) return [...signs.map((x) => `the operator: ${x.text}`), ...claim];
  return [
    `the operator: no trace of it: ${lookedFor(op)}; ${op.newestDecision ? `the record's newest decision is ${stamp(op.newestDecision.at)} (${op.newestDecision.cronJob})` : "no decision in the record"} — if it runs outside the cluster (make run), it is stopped or cannot reach the API server`,
    ...claim,
  ];
}

/** What the operator's findings read: its facts and the clocks, the same for every CronJob. */
export type OperatorView = Pick<WhyFacts, "operator" | "now" | "localNow" | "serverClock">;

/**
 * Whether the operator runs, from what it shows wherever it runs: its Pods and Deployment, its Lease, the record.
 * Down only when a sign says so and none says otherwise; unclear (exit 2) when they disagree.
 */
function livenessFindings(f: OperatorView): Found[] {
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
      fact(
        "operator-unclear",
        {
          downSigns: downs.map((x) => x.text).join("; "),
          upSigns: contradicting.map((x) => x!.text).join(", and "),
        },
        evidence,
        true,
      ),
    ];
  }
  if (podsDown) {
    return [fact("operator-down", { operatorNamespace: op.namespace, operatorSelector: op.selector }, evidence)];
  }
  const l = op.lease;
  return [
    fact(
      "operator-no-leader",
      !l?.renewTime
        ? { noLease: true, lease: `${op.namespace}/${op.leaseName}` }
        : { noLease: false, age: ago(new Date(l.renewTime), f.now), ...(l.holder ? { holder: l.holder } : {}) },
      [...evidence, `the API server's time is ${iso(f.now)}`],
    ),
  ];
}

/**
 * What is wrong with the operator itself now (whether it runs; else whether the instance holding the namespace's
 * claim is down and no other took it; its webhooks, the clocks).
 */
export function operatorFindings(f: OperatorView): Found[] {
  const out: Found[] = livenessFindings(f);
  const op = f.operator;
  const instanceDown = out.length ? undefined : claimFinding(op, f.now);
  if (instanceDown) out.push(instanceDown);
  const lease = op.lease;
  if (lease?.renewTime && lease.holder) {
    const ahead = new Date(lease.renewTime).getTime() - f.now.getTime();
    if (ahead > CLOCK_SKEW_MS) {
      out.push(
        fact("clock-skew", { localClock: false, behind: false, skew: humanDuration(Math.round(ahead / SECOND)) }, [
          `Lease renewTime ${stamp(lease.renewTime)} is later than the API server's time ${iso(f.now)}`,
        ]),
      );
    }
  }
  for (const w of op.webhooks) {
    if (w.readyEndpoints !== 0) continue;
    out.push(
      fact("operator-webhook-failing", { webhook: w.name, service: w.target }, [
        `Service ${w.target} has 0 ready addresses: kubectl apply of a CronJob fails with "failed calling webhook"` +
          (w.name.startsWith("conversion/") ? ', and every API v2 request with "conversion webhook … failed"' : ""),
      ]),
    );
  }
  if (f.serverClock) {
    const skew = f.localNow.getTime() - f.now.getTime();
    // The Date header has whole seconds: a second of difference is rounding.
    if (Math.abs(skew) > CLOCK_SKEW_MS) {
      out.push(
        fact(
          "clock-skew",
          { localClock: true, behind: skew < 0, skew: humanDuration(Math.round(Math.abs(skew) / SECOND)) },
          [`this machine: ${iso(f.localNow)}; the API server (Date header): ${iso(f.now)}`],
        ),
      );
    }
  }
  return out;
}
