// config/manager/manager.yaml as the tools that must agree with it read it: the Dockerfile lint (same
// script, user and node options as the image) and the benchmark (runs the operator with the same options).
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parseAllDocuments } from "yaml";

export interface ManagerContainer {
  name?: string;
  command?: string[];
  args?: string[];
  env?: Array<{ name: string; value?: string }>;
  securityContext?: { runAsUser?: number };
}

export interface ManagerPodSpec {
  containers?: ManagerContainer[];
  securityContext?: { runAsUser?: number };
}

export const MANAGER_MANIFEST = join("config", "manager", "manager.yaml");

/** The manager Deployment's pod spec and its "manager" container (else the first); undefined without the file. */
export function readManagerDeployment(
  root: string,
): { pod: ManagerPodSpec | undefined; container: ManagerContainer | undefined } | undefined {
  const path = join(root, MANAGER_MANIFEST);
  if (!existsSync(path)) return undefined;
  const docs = parseAllDocuments(readFileSync(path, "utf8")).map(
    (d) => d.toJS() as { kind?: string; spec?: { template?: { spec?: ManagerPodSpec } } } | null,
  );
  const pod = docs.find((d) => d?.kind === "Deployment")?.spec?.template?.spec;
  return { pod, container: pod?.containers?.find((c) => c.name === "manager") ?? pod?.containers?.[0] };
}

/** The value the container sets for an environment variable ("" when unset). */
export function envValue(container: ManagerContainer | undefined, name: string): string {
  return container?.env?.find((e) => e.name === name)?.value ?? "";
}

/**
 * The manager's flags for a process on this machine against a local API server (the benchmark, the footprint
 * measurement): its kubeconfig, plain-HTTP metrics on a loopback port, probes on any free one.
 */
export function localManagerFlags(kubeconfigPath: string, metricsPort: number): string[] {
  return [
    "--kubeconfig",
    kubeconfigPath,
    "--metrics-bind-address",
    `127.0.0.1:${metricsPort}`,
    "--metrics-secure=false",
    "--health-probe-bind-address",
    "127.0.0.1:0",
  ];
}
