// spec.afterPolicy All, the join: a CronJob that runs once when every upstream spec.after names has ended a run as
// its `when` says since the join's last run ("the report after both regional extracts have succeeded"). The
// upstreams are spec.after's, read as the after row reads them (controllers/after.ts, the inputs' list); the join's
// run is the after row's (controllers/trigger-join.ts), its Job named from the upstream runs it joins (the lock: a
// repeat after a crash or a leader change finds it), and it books status.upstreams as the after row does. Pure.
import { createHash } from "node:crypto";
import { z } from "zod";
import { type FieldError, invalidField } from "../../runtime/field.ts";
import { isObj } from "../../runtime/objects.ts";

/** How a CronJob runs after the upstreams spec.after names. */
const AFTER_POLICY = {
  Each: "once after each run of each upstream that ends as its `when` says",
  All: "once when every upstream has ended a run as its `when` says since this CronJob's last such run (a join)",
} as const;
type AfterPolicy = keyof typeof AFTER_POLICY;

export const AfterPolicySchema = z.enum(Object.keys(AFTER_POLICY) as [AfterPolicy, ...AfterPolicy[]]).meta({
  description:
    `How it runs after spec.after's upstreams: ${Object.entries(AFTER_POLICY)
      .map(([k, v]) => `${k}, ${v}`)
      .join("; ")}. Unset: Each. All needs spec.after. A backlog of complete joins (the operator was down) runs one ` +
    "after another, oldest first; startingDeadlineSeconds counts from the end that completed a join.",
});

/** spec.afterPolicy as stored (a value the schema refuses is read as Each, the default). */
export function afterPolicyOf(spec: unknown): AfterPolicy {
  const p = isObj(spec) ? spec.afterPolicy : undefined;
  return p === "All" ? "All" : "Each";
}

/** An upstream's run a join takes: the upstream, its Job. */
export interface JoinedRun {
  readonly upstream: string;
  readonly job: string;
}

/** The request a join is, as the record and the after annotation say it: `all:<upstream>/<job>+…`, by upstream. */
export const joinRequest = (runs: readonly JoinedRun[]): string =>
  `all:${[...runs]
    .sort((a, b) => a.upstream.localeCompare(b.upstream))
    .map((r) => `${r.upstream}/${r.job}`)
    .join("+")}`;

/** The upstream runs a join's request names (undefined: it is no join's). */
export function parseJoinRequest(request: string | undefined): JoinedRun[] | undefined {
  if (!request?.startsWith("all:")) return undefined;
  const runs = request
    .slice(4)
    .split("+")
    .map((part) => {
      const i = part.indexOf("/");
      return i > 0 ? { upstream: part.slice(0, i), job: part.slice(i + 1) } : undefined;
    });
  return runs.length && runs.every((r) => r !== undefined) ? runs : undefined;
}

/** A join's Job: `<cronjob>-j<8 hex>` of the runs it joins, its lock. */
export function joinJobName(cronJobName: string, runs: readonly JoinedRun[]): string {
  const digest = createHash("sha256").update(joinRequest(runs)).digest("hex").slice(0, 8);
  return `${cronJobName}-j${digest}`;
}

/** Admission's check of spec.afterPolicy: All joins the upstreams spec.after names, so it needs some. */
export function validateAfterPolicy(spec: { after?: unknown; afterPolicy?: unknown }): FieldError[] {
  if (spec.afterPolicy !== "All") return [];
  const named = Array.isArray(spec.after) ? spec.after.length : 0;
  return named
    ? []
    : [invalidField("spec.afterPolicy", spec.afterPolicy, "joins the upstreams spec.after names: set spec.after")];
}
