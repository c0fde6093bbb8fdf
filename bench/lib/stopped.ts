// The operator installed and stopped, as users meet it in the incident `kubectl cron why -A` is for (issue 79): the
// install (dist/install.yaml, server-side, as the README installs it) applied to a control plane that runs no
// controllers, so its Deployment never has a Pod and its Services no endpoint; and its leader Lease, last renewed
// some minutes ago by a Pod that is gone. Applied once the fleet is made: its webhooks (failurePolicy Fail, no
// endpoint) refuse every CronJob write from then on, as they do in a cluster whose operator is down.
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { PROJECT_ROOT } from "../../envtest/index.ts";
import type { Client } from "../../runtime/client.ts";
import { Kinds } from "../../runtime/kinds.ts";

/** The default install's namespace and leader-election Lease (config/default, cmd/flags.ts). */
const NAMESPACE = "cronjob-operator-system";
const LEASE = "80807133.tutorial.kubebuilder.io";

/** A Lease's MicroTime: RFC 3339 with microseconds. */
const microTime = (ms: number) => new Date(ms).toISOString().replace(/Z$/, "000Z");

/** The install applied with kubectl (KUBECONFIG=`kubeconfigPath`), and its Lease stale since `stoppedMs` ago. */
export async function stopOperator(client: Client, kubeconfigPath: string, stoppedMs: number): Promise<void> {
  execFileSync(
    "kubectl",
    ["apply", "--server-side", "--force-conflicts", "-f", join(PROJECT_ROOT, "dist", "install.yaml")],
    { env: { ...process.env, KUBECONFIG: kubeconfigPath }, stdio: ["ignore", "ignore", "pipe"] },
  );
  const renewed = Date.now() - stoppedMs;
  await client.create(Kinds.Lease, {
    apiVersion: "coordination.k8s.io/v1",
    kind: "Lease",
    metadata: { name: LEASE, namespace: NAMESPACE },
    spec: {
      holderIdentity: "cronjob-operator-controller-manager-6d4b9c7f8-q2xkz_5b0f6c1e-3a7d-4e51-9d0e-2f3c4b5a6d7e",
      leaseDurationSeconds: 15,
      acquireTime: microTime(renewed - 3_600_000),
      renewTime: microTime(renewed),
      leaseTransitions: 1,
    },
  });
}
