// The namespace the manager runs in. The leader-election lease and the webhook certificate both default to
// it, so they must read it the same way: a manager that found it in one place and not the other would put
// them in different namespaces.
import { readFileSync } from "node:fs";

/** Where the kubelet mounts the pod's service-account namespace. */
const SERVICE_ACCOUNT_NAMESPACE_FILE = "/var/run/secrets/kubernetes.io/serviceaccount/namespace";

/**
 * POD_NAMESPACE (the Deployment sets it from the downward API), else the mounted service account's
 * namespace file, else undefined (outside a cluster, e.g. `make run`). The sources are injectable for tests.
 */
export function podNamespace(
  env: Readonly<Record<string, string | undefined>> = process.env,
  namespaceFile: string = SERVICE_ACCOUNT_NAMESPACE_FILE,
): string | undefined {
  if (env.POD_NAMESPACE) return env.POD_NAMESPACE;
  try {
    return readFileSync(namespaceFile, "utf8").trim() || undefined;
  } catch {
    // No service account mounted (or unreadable): not in a pod.
    return undefined;
  }
}
