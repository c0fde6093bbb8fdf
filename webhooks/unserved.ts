// An admission request to a path this replica does not serve: the webhook configuration is newer than its code.
// That is an upgrade's window: kubectl apply (dist/install.yaml, `make deploy`) and Helm apply the new webhook
// configurations beside the new Deployment, so for the seconds of the rollout the API server sends the new paths to
// replicas still running the old code. A 404 there refused every write of that kind until the rollout ended. A
// replica admits it instead, with a warning naming the webhook, and leaves its checks to the replicas that serve it:
// the CRD's schema still holds the object's shape, and the reconciler reports a stored object it cannot use (a bad
// calendar holds the slots it would govern), never runs over it. Logged, so a path no replica serves shows.
import type { Logger } from "../runtime/log.ts";
import { type AdmissionHandler, allowed } from "../runtime/webhook/index.ts";

/** The warning a client gets for a write admitted by a replica that does not serve the webhook at `path`. */
export function unservedWarning(path: string): string {
  return `admitted without the webhook at ${path}: the operator's replica that answered does not serve it (an upgrade rolling out?); the CRD's schema still applies`;
}

/** The manager's answer to an admission request on a path it does not serve: admitted, with the warning. */
export function unservedAdmission(logger: Logger): (path: string) => AdmissionHandler {
  return (path) => (req) => {
    logger.info("admitting a request for a webhook path this replica does not serve", {
      path,
      resource: req.resource.resource,
      operation: req.operation,
    });
    return allowed([unservedWarning(path)]);
  };
}

/**
 * On a webhook configuration: the webhooks (comma-separated names) it ships with `failurePolicy: Ignore` beside which
 * the manager adds a twin that fails closed (`<name>-served`) once the Service port they call has a ready endpoint
 * (runtime/webhook/failuregate.ts): the webhooks a release adds, so the seconds before its first Pod is ready refuse
 * no write of their kinds, and the installer's fields stay as it applied them (no conflict, no drift).
 */
export const FAIL_ONCE_SERVED_ANNOTATION = "batch.tutorial.kubebuilder.io/fail-once-served";
