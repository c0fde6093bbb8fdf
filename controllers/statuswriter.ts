// The CronJob's one status write per pass: the status with its conditions, written only if it changed, as a JSON
// patch (RFC 6902) of the status subresource against the object as read (runtime/jsonpatch.ts, statusPatch): the
// resourceVersion read first, as a precondition (optimistic concurrency: a stale read gets 409, which the server
// does not retry, and the pass is retried), then only the status fields that changed, each whole, except the
// record (status.recentRuns), whose change is sent as its edits: the entries dropped from its end removed, the
// entries changed in place replaced, the new ones added at its front.
//
// Why a patch and not a PUT of the whole object: a PUT sends spec, managedFields and the whole status on every
// write, and must, since a body without managedFields would drop other field managers' entries (seen on
// kube-apiserver 1.20); a run's write changes a few fields and one or two record entries. The patch carries
// neither spec nor managedFields (the server patches its stored object, so they stay as stored), and a typical
// run's write (a new Job active, lastScheduleTime, nextScheduleTime, an entry in front of a full record) is a
// fraction of the PUT's bytes. What it does not save: kube-apiserver applies a JSON patch to a custom resource by
// encoding its stored object, patching and decoding it, then takes the same update path as a PUT (validation,
// managed fields, storage, watch): bench/results/2026-11-26-status-cost.md measured a merge patch of status, which
// is applied the same way, at about 0.4 ms more of its CPU per write than the PUT.
import { CronJobResource as CronJobKind, type CronJobWire, type CronJobWireStatus } from "../api/v1/index.ts";
import type { ReconcileContext } from "../runtime/controller.ts";
import { isConflict, isNotFound } from "../runtime/errors.ts";
import type { StatusWriter } from "../runtime/interfaces.ts";
import { statusPatch } from "../runtime/jsonpatch.ts";
import { canonical, digest, stripUndefined } from "../runtime/objects.ts";
import { type ConditionInput, setConditions } from "./conditions.ts";
import type { Remembered } from "./memory.ts";

/** False when the write lost an optimistic-concurrency race (409) and should be retried. */
export async function writeStatus(
  client: StatusWriter,
  cronJob: Readonly<CronJobWire>,
  computed: Readonly<CronJobWireStatus>,
  conditions: ConditionInput[],
  o: { now: Date; remembered: Remembered; ctx: ReconcileContext },
): Promise<boolean> {
  const status: CronJobWireStatus = {
    ...computed,
    conditions: setConditions(cronJob.status?.conditions, conditions, o.now, cronJob.metadata.generation),
  };
  const cleaned = stripUndefined(status);
  if (canonical(cronJob.status ?? {}) === canonical(cleaned)) return true;
  // Our own write may not have reached the cache yet (the reconcile triggered by the Job we just created sees the
  // CronJob from before it): writing the same status again would only conflict.
  const last = o.remembered.lastWritten;
  const wanted = digest(canonical(cleaned));
  if (last && last.basedOn === cronJob.metadata.resourceVersion && last.status === wanted) return true;
  const { namespace, name, resourceVersion } = cronJob.metadata;
  const patch = statusPatch(cronJob.status, cleaned, resourceVersion, { newestFirstLists: ["recentRuns"] });
  try {
    await client.patchStatus(CronJobKind, namespace, name ?? "", patch, "json");
    o.remembered.lastWritten = { basedOn: cronJob.metadata.resourceVersion ?? "", status: wanted };
    return true;
  } catch (err) {
    if (isNotFound(err)) return true; // deleted meanwhile: nothing to write
    if (isConflict(err)) {
      o.ctx.log.debug("status patch conflicted; retrying with the newer object", {
        resourceVersion: cronJob.metadata.resourceVersion,
      });
      return false;
    }
    throw err;
  }
}
