// The CronJob's one status write per pass: the status with its conditions, written only if it changed, as a PUT
// of the object as read (optimistic concurrency: a stale read gets 409 and the pass is retried).
import { CronJobResource as CronJobKind, type CronJobWire, type CronJobWireStatus } from "../api/v1/index.ts";
import type { ReconcileContext } from "../runtime/controller.ts";
import { isConflict, isNotFound } from "../runtime/errors.ts";
import type { StatusWriter } from "../runtime/interfaces.ts";
import { canonical, digest, jsonEqual, stripUndefined } from "../runtime/objects.ts";
import { type ConditionInput, setConditions } from "./conditions.ts";
import type { Remembered } from "./memory.ts";

/**
 * The status a pass would write, its conditions set, or undefined when there is nothing to write: it is the stored
 * one, or this process just wrote it and the cache has not caught up (the reconcile triggered by the Job we just
 * created sees the CronJob from before it: writing the same status again would only conflict).
 */
export function statusToWrite(
  cronJob: Readonly<CronJobWire>,
  computed: Readonly<CronJobWireStatus>,
  conditions: ConditionInput[],
  now: Date,
  remembered: Remembered,
): CronJobWireStatus | undefined {
  const status: CronJobWireStatus = {
    ...computed,
    conditions: setConditions(cronJob.status?.conditions, conditions, now, cronJob.metadata.generation),
  };
  const cleaned = stripUndefined(status);
  if (jsonEqual(cronJob.status ?? {}, cleaned)) return undefined;
  const last = remembered.lastWritten;
  if (last && last.basedOn === cronJob.metadata.resourceVersion && last.status === digest(canonical(cleaned))) {
    return undefined;
  }
  return cleaned;
}

/** False when the write lost an optimistic-concurrency race (409) and should be retried. */
export async function writeStatus(
  client: StatusWriter,
  cronJob: Readonly<CronJobWire>,
  cleaned: CronJobWireStatus,
  o: { remembered: Remembered; ctx: ReconcileContext },
): Promise<boolean> {
  const wanted = digest(canonical(cleaned));
  // The whole object, as read: the status subresource keeps everything but status from the stored object, but a
  // body without the rest would drop other field managers' managedFields entries (seen on kube-apiserver 1.20).
  // Not a patch of status: for a custom resource kube-apiserver applies a merge or a JSON patch by encoding the
  // stored object, patching and decoding it again before the same validation, which costs it more CPU than this PUT
  // (docs/operating.md, "The figures behind the code's rules"), though a JSON patch of what changed sends a third of
  // the bytes. kube-apiserver's CPU is what a burst of runs waits for; the bytes are not.
  const body: CronJobWire = { ...cronJob, status: cleaned };
  try {
    await client.updateStatus(CronJobKind, body);
    o.remembered.lastWritten = { basedOn: cronJob.metadata.resourceVersion ?? "", status: wanted };
    return true;
  } catch (err) {
    if (isNotFound(err)) return true; // deleted meanwhile: nothing to write
    if (isConflict(err)) {
      o.ctx.log.debug("status update conflicted; retrying with the newer object", {
        resourceVersion: cronJob.metadata.resourceVersion,
      });
      return false;
    }
    throw err;
  }
}
