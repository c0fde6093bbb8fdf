// `kubectl cron` against a fake API server that answers discovery as a recorded 1.x cluster does, on a frozen clock:
// each test seeds its objects (cluster) and runs the plugin's main as a user would (run); the servers stop after it.
import { afterEach, beforeEach, mock } from "node:test";
import { main } from "../cmd/kubectl-cron/main.ts";
import type { KubeObject } from "../runtime/kinds.ts";
import { type DiscoveryDocuments, FakeAPIServer } from "./fake-apiserver.ts";
import { recorded } from "./fixtures/builtin-v1/index.ts";

/** `discovery`: what the API server serves (a recorded 1.x cluster's, unless said). */
export function pluginCluster(namespace: string, now: Date, discovery: DiscoveryDocuments = recorded().discovery) {
  const servers: FakeAPIServer[] = [];
  beforeEach(() => mock.timers.enable({ apis: ["Date"], now }));
  afterEach(async () => {
    mock.timers.reset();
    for (const s of servers.splice(0)) await s.stop();
  });

  /** A fake API server holding `objects`, its kubeconfig's namespace `ns`. */
  async function cluster(objects: KubeObject[], ns = namespace): Promise<FakeAPIServer> {
    const server = await new FakeAPIServer({ discovery, notFound: recorded().notFound, now: () => now }).start(ns);
    servers.push(server);
    await server.seed(...objects);
    return server;
  }

  return { cluster, run: runPlugin };
}

/**
 * `kubectl cron <argv>` in this process against a cluster (a fake API server, or envtest's), with an empty
 * environment: its exit code and output.
 */
export async function runPlugin(cluster: { kubeconfigPath: string }, argv: string[]) {
  let out = "";
  let err = "";
  const code = await main([...argv, "--kubeconfig", cluster.kubeconfigPath], {
    stdout: (s) => (out += s),
    stderr: (s) => (err += s),
    env: {},
  });
  return { code, out, err };
}
