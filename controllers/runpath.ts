// The run path of step 9: one request of a trigger's (a due slot, a run-now request, a backfill slot), whatever the
// trigger, through the one admission rule (runs.ts: the concurrency policy, the trigger's own limit, then the
// concurrency group) into one Job, created or adopted (jobs.ts: the Job's name is its lock), after Replace's deletes.
// Step 9 sees it through one small interface, RunPath, as the upstream CronJob controller (pkg/controller/cronjob,
// injection.go) sees its Job writes through jobControlInterface: the walk over a trigger's requests and their books
// stay the reconciler's; how a request becomes a Job is here. What it did goes into the pass (its Jobs, Events,
// counts, problems, a retry) for the commit (step 10) to apply; the group's place is the one thing taken here, before
// the create is sent, so no other worker can take it meanwhile.
import { classifyJob, EventReason, type Job, runFactsOf, withRunFacts } from "../api/v1/index.ts";
import type { Clock } from "../runtime/clock.ts";
import type { ReconcileContext } from "../runtime/controller.ts";
import type { ObjectClient } from "../runtime/interfaces.ts";
import { rfc3339 } from "../runtime/metatime.ts";
import type { GroupPlaces, GroupView } from "./groups.ts";
import type { ChildJobs } from "./jobs.ts";
import { mayReplace } from "./observe.ts";
import { type Pass, type RunResult, unreported } from "./pass.ts";
import { recordEnded } from "./record.ts";
import { admit } from "./runs.ts";
import { endJobs } from "./starts.ts";
import type { Trigger, TriggerRun } from "./trigger.ts";

/** How step 9 runs a request: the only way a trigger's request becomes a Job. */
export interface RunPath {
  /**
   * One run, whatever its trigger: admitted (or held), Replace's running Jobs deleted, the Job created or our own
   * of its name adopted; the Job joins the pass's known and running Jobs. The trigger's books are step 9's.
   */
  run(pass: Pass, r: TriggerRun, ctx: ReconcileContext): Promise<RunResult>;
}

/** What the run path reads and writes through: the Jobs (and their ends' updates), the groups' places, the clock. */
interface RunPathDeps {
  client: ObjectClient;
  jobs: ChildJobs;
  /** The inputs' readers (inputs.ts): admission reads the group's, and takes its places. */
  inputs: { readonly group: GroupPlaces };
  triggers: readonly Trigger[];
  clock: Clock;
}

/** A request the admission rule did not let run: why, as the record and Events say it. */
type Refusal = Extract<ReturnType<typeof admit>, { run: false }>;

/** The CronJob's concurrency group as one request sees it (JobRunPath.groupOf). */
type GroupSeen = { view: GroupView; key: string; since: number; until: number | undefined };

/** The run path over the API server: admission, then the Job's writes through ChildJobs (jobs.ts). */
export class JobRunPath implements RunPath {
  /** The start limit's Job ends, before Replace deletes a Job (starts.ts endJobs). */
  private readonly client: ObjectClient;
  /** The creates, adoptions and Replace's deletes. */
  private readonly jobs: ChildJobs;
  /** The concurrency groups: what admission reads of a group, and the places this process took. */
  private readonly groups: GroupPlaces;
  /** The triggers' rows: whether Replace may delete a Job (its books). */
  private readonly triggers: readonly Trigger[];
  private readonly clock: Clock;

  constructor(d: RunPathDeps) {
    this.client = d.client;
    this.jobs = d.jobs;
    this.groups = d.inputs.group;
    this.triggers = d.triggers;
    this.clock = d.clock;
  }

  async run(pass: Pass, r: TriggerRun, ctx: ReconcileContext): Promise<RunResult> {
    const { cronJob } = pass;
    const due = r.dueAt?.();
    const replaceable = (job: Readonly<Job>) => mayReplace(this.triggers, cronJob, job, due);
    const group = this.groupOf(pass, r, due);
    const admission = admit(cronJob.spec.concurrencyPolicy, r, [...pass.active.values()], replaceable, group);
    if (!admission.run) return held(pass, r, admission, group, ctx);
    // The Jobs it replaces are written on it, for the record rebuilt from it (api/v1/recentruns.ts).
    const replacing = admission.replace.map((j) => j.metadata?.name ?? "").filter((n) => n);
    const job = withRunFacts(r.job(cronJob), { replaced: replacing });
    const name = job.metadata!.name!;
    // The group's place is taken with the decision, before any await: no other worker can take it meanwhile.
    const ns = cronJob.metadata.namespace ?? "";
    if (group) this.groups.take(ns, group.view.name, name, this.clock.now().getTime());
    const release = () => group && this.groups.release(ns, group.view.name, name);
    if (admission.replace.length && !(await this.replaceActive(pass, admission.replace, ctx))) {
      release();
      return { result: "failed" };
    }

    const outcome = await this.jobs.createOrAdopt(cronJob, job, ctx);
    if (!outcome.ok) {
      release();
      if (outcome.event) pass.events.push(outcome.event);
      pass.problems = { ...pass.problems, ...outcome.problems };
      if (outcome.retry !== undefined) pass.retry = outcome.retry;
      const result = outcome.problems.createConflict ? "conflict" : "failed";
      return outcome.refused ? { result, refused: outcome.refused } : { result };
    }

    pass.jobs.set(name, outcome.job);
    if (classifyJob(outcome.job) === "active") pass.active.set(name, outcome.job);
    pass.created = true;
    // Adopted: the Jobs it replaced are those its creator wrote on it.
    if (!outcome.created) return { result: "adopted", job: outcome.job, replaced: runFactsOf(outcome.job).replaced };
    const made = r.created(name);
    pass.events.push(made.event);
    if (outcome.warnings) {
      pass.events.push({ reason: EventReason.JobWarning, message: `Job ${name}: ${outcome.warnings.join("; ")}` });
    }
    pass.counts.push(made.count);
    pass.fresh.push(name);
    if (due) pass.skews.push(Math.max(0, (this.clock.now().getTime() - due.getTime()) / 1000));
    // Debug, as kube-controller-manager logs its "Created Job" (V(4)): one line per run at info cost the operator a
    // tenth of its CPU per run at 5,000 every-minute CronJobs (a profile, bench/results/2026-11-27-issue61.analysis.md),
    // for a fact the record (status.recentRuns) keeps.
    ctx.log.debug(made.log, { job: name, trigger: r.trigger });
    return { result: "created", job: outcome.job, replaced: replacing };
  }

  /**
   * The CronJob's concurrency group as this request sees it (undefined: it names none). The CronJob waits since the
   * first run of it the group held, while it keeps waiting: a scheduled slot's time, or for a request without a slot
   * (run-now, a backfill slot: old times) when it first waited, so it queues behind the runs already waiting. A
   * scheduled slot may start until its starting deadline.
   */
  private groupOf(pass: Pass, r: TriggerRun, due: Date | undefined): GroupSeen | undefined {
    const { cronJob } = pass;
    const name = cronJob.spec.concurrencyGroup;
    if (!name) return undefined;
    const ns = cronJob.metadata.namespace ?? "";
    const now = this.clock.now().getTime();
    const mine = this.groups.waitersOf(ns, name, now).find((w) => w.member === cronJob.metadata.name);
    // Waiting since its slot, or since it first waited if that is earlier: a CronJob whose held slot a newer one
    // replaces (RunLatest) keeps its place in the queue, or a less frequent CronJob would always be older than it.
    const asked = r.row.movesLastScheduleTime && due ? due.getTime() : now;
    const since = Math.min(mine?.since ?? asked, asked);
    const deadline = cronJob.spec.startingDeadlineSeconds;
    const until =
      r.row.movesLastScheduleTime && due && typeof deadline === "number" ? due.getTime() + deadline * 1000 : undefined;
    const view = this.groups.view(ns, name, cronJob.metadata.name ?? "", since, now);
    return { view, key: runKey(r), since, until };
  }

  /**
   * Replace: deletes every running Job. As the built-in controller: a failed delete fails the reconcile, and the
   * work queue retries it with backoff; the run happens once the running Job is gone.
   */
  private async replaceActive(pass: Pass, running: readonly Readonly<Job>[], ctx: ReconcileContext): Promise<boolean> {
    for (const job of running) {
      // A run the start limit ends this pass is ended first, and its end booked, as if it had lived to fail: deleted
      // unended, its reason (the annotation the record is rebuilt from) would go with it.
      const i = pass.ends.findIndex((e) => e.name === job.metadata?.name);
      if (i >= 0) {
        const [end] = pass.ends.splice(i, 1);
        const failed = await endJobs(this.client, [end!], ctx);
        unreported(pass, failed);
        if (!failed.length) pass.status = recordEnded(pass.status, end!.update, this.clock.now());
      }
      const deleted = await this.jobs.delete(pass.cronJob, job, ctx, "replace");
      pass.events.push(deleted.event);
      if (deleted.failed) {
        pass.problems = { ...pass.problems, deleteFailed: deleted.failed };
        pass.retry = `replacing the active Job: ${deleted.failed}`;
        return false;
      }
      const uid = job.metadata?.uid;
      if (uid) pass.remember.replaced.add(uid);
      pass.active.delete(job.metadata?.name ?? "");
    }
    return true;
  }
}

/** A request held back: by its group (the group's wait is remembered), or behind a running Job of the CronJob. */
function held(
  pass: Pass,
  r: TriggerRun,
  admission: Refusal,
  group: GroupSeen | undefined,
  ctx: ReconcileContext,
): RunResult {
  if (admission.held) pass.events.push(admission.held);
  ctx.log.debug("run held back by the concurrency policy, the request's limit or the group", { trigger: r.trigger });
  if (admission.group && group) {
    pass.groupWait = { since: group.since, until: group.until };
    return { result: "held", group: admission.group };
  }
  const blocking = admission.held ? [...pass.active.keys()].sort()[0] : undefined;
  const policy = pass.cronJob.spec.concurrencyPolicy;
  return blocking ? { result: "held", blockedBy: blocking, policy } : { result: "held" };
}

/** A run as its Events name it: its slot, or its trigger and request. */
function runKey(r: TriggerRun): string {
  const s = r.subject();
  if (s.scheduledTime) return `run for ${rfc3339(s.scheduledTime)}`;
  return s.request !== undefined ? `${s.trigger} request "${s.request}"` : `${s.trigger} run`;
}
