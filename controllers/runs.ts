// The one admission rule of the run path: every run — a due slot, a caught-up slot, a run-now request, a backfill
// slot — is admitted by the concurrency policy and its trigger's own limit, both read from the trigger's row
// (triggers.ts), then by its CronJob's concurrency group (groups.ts), in that order: Forbid and Replace act first,
// within the CronJob; the group's limit is shared with its other CronJobs. Pure.
import { EventReason, type Job, RecordReason } from "../api/v1/index.ts";
import type { GroupView } from "./groups.ts";
import type { GroupHold } from "./record.ts";
import type { StateEvent, TriggerRun } from "./trigger.ts";

/** Admission's answer: run (after deleting `replace`, Replace's running Jobs), or wait (`group`: its group holds it). */
type Admission =
  { run: true; replace: readonly Readonly<Job>[] } | { run: false; held?: StateEvent; group?: GroupHold };

/** The most Job names a group's hold message lists. */
const LISTED = 3;

function names(list: readonly string[]): string {
  const shown = list.slice(0, LISTED).join(", ");
  return list.length > LISTED ? `${shown} and ${list.length - LISTED} more` : shown;
}

/**
 * The group's rule: a run takes a place when fewer than `limit` of the group's Jobs run (`replacing`, the ones Replace
 * is about to delete, not counted) and no run of another member waits ahead of it for one.
 */
function groupHold(group: GroupView, replacing: ReadonlySet<string>): GroupHold | undefined {
  if (group.limit === undefined) {
    return {
      reason: RecordReason.ConcurrencyGroupNotFound,
      message: `held: spec.concurrencyGroup names ${group.name}, which is not a ConcurrencyGroup of this namespace; runs wait until it exists`,
    };
  }
  const running = group.running.filter((n) => !replacing.has(n));
  if (running.length >= group.limit) {
    return {
      reason: RecordReason.ConcurrencyGroupFull,
      message: `held: group ${group.name} is at ${running.length}/${group.limit}${running.length ? `: Jobs ${names(running)}` : ""}`,
      ...(running.length ? { blockedBy: running[0] } : {}),
    };
  }
  if (running.length + group.ahead.length >= group.limit) {
    return {
      reason: RecordReason.ConcurrencyGroupQueue,
      message: `held: group ${group.name} is at ${running.length}/${group.limit} and older runs of ${names(group.ahead)} wait for the next place first`,
    };
  }
  return undefined;
}

/** The Event of a run the group holds (`key`: the run, as its Events name it): once per run and reason. */
function groupEvent(hold: GroupHold, key: string): StateEvent {
  const notFound = hold.reason === RecordReason.ConcurrencyGroupNotFound;
  return {
    reason: notFound ? EventReason.ConcurrencyGroupNotFound : EventReason.ConcurrencyGroupFull,
    message: `${key}: ${hold.message}`,
    once: {
      topic: notFound ? EventReason.ConcurrencyGroupNotFound : EventReason.ConcurrencyGroupFull,
      key: `${key}\u0000${hold.reason}`,
    },
  };
}

/**
 * The one admission rule. `active`: every Job of the CronJob known to run this pass — the cache's, the ones the
 * cache has not caught up with (confirmed by a live read, or created or adopted earlier in this pass) — so a
 * limit can never be exceeded by a lagging cache. `group`: the CronJob's concurrency group, as groups.ts reads it
 * (its running Jobs include the ones this process created that the cache lacks, for the same reason).
 */
export function admit(
  concurrencyPolicy: string | undefined,
  r: TriggerRun,
  active: readonly Readonly<Job>[],
  /**
   * Whether Replace may delete a running Job (observe.ts mayReplace): its run is in the stored status's books. Until
   * then the Job (its name) is the run's only trace, and a pass reading a status from before it would run the slot
   * again.
   */
  replaceable: (job: Readonly<Job>) => boolean = () => true,
  group?: { view: GroupView; key: string },
): Admission {
  let replace: readonly Readonly<Job>[] = [];
  if (active.length > 0) {
    const running = active.map((j) => j.metadata?.name ?? "");
    if (concurrencyPolicy === "Forbid" || (concurrencyPolicy === "Replace" && r.row.onReplace === "wait")) {
      const held = r.held?.(running);
      return held ? { run: false, held } : { run: false };
    }
    // Replace waits for the books: a run this pass (or a pass whose status write is not stored yet) started is
    // replaced by a later pass.
    if (concurrencyPolicy === "Replace") {
      if (!active.every(replaceable)) return { run: false };
      replace = active;
    }
  }
  if (!replace.length) {
    const room = r.room?.(active);
    if (room !== undefined && room <= 0) return { run: false };
  }
  if (group) {
    const hold = groupHold(group.view, new Set(replace.map((j) => j.metadata?.name ?? "")));
    if (hold) return { run: false, held: groupEvent(hold, group.key), group: hold };
  }
  return { run: true, replace };
}
