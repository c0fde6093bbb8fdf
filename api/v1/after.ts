// spec.after: a CronJob that runs when another CronJob of its namespace has ended a run, as the user says (it
// succeeded, it failed, either), once for each such run. The upstream's runs are its Jobs; the downstream's Job for
// one is named from the upstream Job's name (the lock: a repeat after a crash or a leader change finds it), and its
// book (status.upstreams) says up to which run of each upstream it has decided, so a run of the upstream is decided
// once even after both Jobs are gone. Its words, checks and names are here; the controller's half is
// controllers/triggers.ts (the after row), admission's cycle check webhooks/cronjob_webhook.ts. Pure.
import { createHash } from "node:crypto";
import { type FieldError, invalidField } from "../../runtime/field.ts";
import { isObj } from "../../runtime/objects.ts";
import { GROUP } from "./groupversion_info.ts";
import { classifyJob, finishedAt, type Job } from "./job.ts";
import { documentedKey, type WhyCause } from "./metadata.ts";
import { AFTER_WHEN, type AfterWhen, MAX_AFTER_DEPTH, MAX_UPSTREAMS } from "./after_types.ts";

export * from "./after_types.ts";

/** An upstream as the controller reads spec.after (a stored object the schema refuses is read leniently). */
export interface Upstream {
  cronJob: string;
  when: AfterWhen;
}

/** spec.after as stored: the entries that name a CronJob, `when` defaulted. */
export function upstreamsOf(spec: unknown): Upstream[] {
  const after = isObj(spec) ? spec.after : undefined;
  const list = Array.isArray(after) ? (after as unknown[]) : [];
  return list
    .filter((e): e is Record<string, unknown> => isObj(e) && typeof e.cronJob === "string" && e.cronJob !== "")
    .slice(0, MAX_UPSTREAMS)
    .map((e) => ({
      cronJob: e.cronJob as string,
      when: typeof e.when === "string" && e.when in AFTER_WHEN ? (e.when as AfterWhen) : "Succeeded",
    }));
}

/** Whether an upstream's Job ended as `when` asks (a running Job has not ended). */
export function endsAs(job: Readonly<Job>, when: AfterWhen): boolean {
  const c = classifyJob(job);
  if (c === "successful") return when !== "Failed";
  if (c === "failed") return when !== "Succeeded";
  return false;
}

/** On a downstream's Job: the upstream run it follows, "<cronjob>/<job>". */
export const AFTER_ANNOTATION = documentedKey(`${GROUP}/after`, () => ({
  on: "Job of a CronJob with `spec.after`, run after an upstream's run",
  setBy: "the controller",
  format: "`<upstream cronjob>/<upstream job>`",
  meaning:
    "The upstream run this Job follows: `kubectl cron history` names it, and the record's entry (trigger After) " +
    "has it as its request.",
}));

/** A downstream's Job for an upstream run: `<cronjob>-a<8 hex>` of the upstream's Job, its lock. */
export function afterJobName(cronJobName: string, upstream: string, upstreamJob: string): string {
  const digest = createHash("sha256").update(`${upstream}/${upstreamJob}`).digest("hex").slice(0, 8);
  return `${cronJobName}-a${digest}`;
}

/** The request an upstream run is, as the record and the annotation say it. */
export const afterRequest = (upstream: string, upstreamJob: string): string => `${upstream}/${upstreamJob}`;

/** The upstream run a request names (undefined: none). */
export function parseAfterRequest(request: string | undefined): { cronJob: string; job: string } | undefined {
  // A CronJob's name has no ":": "all:…" is a join's request (join.ts), not one upstream's run.
  if (request?.includes(":")) return undefined;
  const i = request?.indexOf("/") ?? -1;
  return request && i > 0 ? { cronJob: request.slice(0, i), job: request.slice(i + 1) } : undefined;
}

/** An upstream's runs ended after `after` (exclusive, by end then name), oldest first, as `when` asks. */
export function endedRuns(
  jobs: readonly Readonly<Job>[],
  when: AfterWhen,
  after: { ended: Date; job?: string | undefined } | undefined,
): { job: Readonly<Job>; ended: Date }[] {
  return jobs
    .filter((j) => endsAs(j, when))
    .map((job) => ({ job, ended: finishedAt(job) }))
    .filter((r): r is { job: Readonly<Job>; ended: Date } => r.ended !== undefined)
    .filter((r) => !after || later(r, after))
    .sort((a, b) => a.ended.getTime() - b.ended.getTime() || nameOf(a.job).localeCompare(nameOf(b.job)));
}

const nameOf = (j: Readonly<Job>) => j.metadata?.name ?? "";
function later(r: { job: Readonly<Job>; ended: Date }, after: { ended: Date; job?: string | undefined }): boolean {
  const d = r.ended.getTime() - after.ended.getTime();
  return d > 0 || (d === 0 && after.job !== undefined && nameOf(r.job) > after.job);
}

/**
 * Admission's check of spec.after on its own: no CronJob after itself; each named once. The cycle through other
 * CronJobs is checked against the cluster (afterCycle).
 */
export function validateUpstreams(name: string, spec: { after?: unknown }): FieldError[] {
  const list = Array.isArray(spec.after) ? (spec.after as unknown[]) : [];
  const errors: FieldError[] = [];
  const seen = new Set<string>();
  list.forEach((e, i) => {
    const cronJob = isObj(e) ? e.cronJob : undefined;
    if (typeof cronJob !== "string") return;
    const field = `spec.after[${i}].cronJob`;
    if (cronJob.includes("/"))
      errors.push(
        invalidField(field, cronJob, "must be a CronJob of this namespace: spec.after names no other namespace"),
      );
    else if (cronJob === name) errors.push(invalidField(field, cronJob, "a CronJob cannot run after itself"));
    else if (seen.has(cronJob)) errors.push(invalidField(field, cronJob, "is named twice"));
    seen.add(cronJob);
  });
  return errors;
}

/**
 * A cycle through spec.after from `name` (under admission, with `after` as its new list), read from the cluster
 * (`afterOf`: a CronJob's upstreams, undefined when unknown): the path that comes back to it ("b → a → b"), or none.
 */
export function afterCycle(
  name: string,
  after: readonly string[],
  afterOf: (cronJob: string) => readonly string[] | undefined,
): string[] | undefined {
  const walk = (path: string[]): string[] | undefined => {
    if (path.length > MAX_AFTER_DEPTH) return undefined;
    const at = path[path.length - 1]!;
    const next = at === name && path.length === 1 ? after : (afterOf(at) ?? []);
    for (const up of next) {
      if (up === name) return [...path, up];
      if (path.includes(up)) continue;
      const found = walk([...path, up]);
      if (found) return found;
    }
    return undefined;
  };
  return walk([name]);
}

/**
 * The facts `kubectl cron why` says spec.after's causes with (the plugin's CauseParams has each of them, under the same
 * name): the CronJob and its namespace, the slot (`when`; absent, the words are a finding besides the verdict) and
 * whether it is still to come, the upstream spec.after names, and the path of a cycle.
 */
interface AfterFacts {
  name: string;
  namespace: string;
  when?: string;
  toCome?: boolean;
  upstream: string;
  cycle: string;
}

/** The verdict on a slot that did not run, as the plugin's causes begin one ("did not run at SLOT: WORDS"). */
const didNotRun = (p: Pick<AfterFacts, "when" | "toCome">, words: string) =>
  p.when === undefined ? words : `${p.toCome ? "will not run" : "did not run"} at ${p.when}: ${words}`;

/**
 * spec.after's causes of `kubectl cron why`: rows of the plugin's one table of causes (cmd/kubectl-cron/answer/causes.ts
 * CAUSES, which docs/troubleshooting.md is generated from), written here with the trigger's other words, as run-now's
 * (runnow.ts) and the retry's (retry.ts) are.
 */
export const AFTER_CAUSES = [
  {
    id: "upstream-not-found",
    title: "spec.after names a CronJob that does not exist",
    detect:
      "A CronJob `spec.after` names is not in the namespace (read with the CronJob), or its `Degraded` condition says " +
      "`UpstreamNotFound`.",
    verdict: (p: Pick<AfterFacts, "when" | "toCome" | "upstream" | "namespace">) =>
      didNotRun(
        p,
        `spec.after names ${p.upstream}, which is not a CronJob of namespace ${p.namespace}: nothing runs after it ` +
          "until it exists",
      ),
    fix: (p: Pick<AfterFacts, "name" | "namespace" | "upstream">) => [
      `Create the CronJob ${p.upstream} in namespace ${p.namespace}, or correct \`spec.after\` ` +
        `(\`kubectl cron list -n ${p.namespace}\` lists its CronJobs).`,
    ],
  },
  {
    id: "after-cycle",
    title: "spec.after makes a cycle",
    detect:
      "The `Degraded` condition says `AfterCycle` (two CronJobs applied at once, each after the other: admission " +
      "saw neither); its message names the path.",
    verdict: (p: Pick<AfterFacts, "when" | "toCome" | "cycle">) =>
      didNotRun(p, `spec.after makes a cycle (${p.cycle}): nothing runs after an upstream until it is broken`),
    fix: (p: Pick<AfterFacts, "cycle">) => [
      `Remove one CronJob of the cycle from the other's \`spec.after\` (${p.cycle}).`,
    ],
  },
] as const satisfies readonly WhyCause[];
