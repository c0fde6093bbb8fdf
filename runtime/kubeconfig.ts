// Where the manager's cluster credentials come from, in controller-runtime's order: --kubeconfig,
// $KUBECONFIG, the in-cluster service account, then ~/.kube/config.
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { KubeConfig } from "@kubernetes/client-node";

const SA_TOKEN = "/var/run/secrets/kubernetes.io/serviceaccount/token";

export function loadKubeConfig(kubeconfigPath?: string, env: NodeJS.ProcessEnv = process.env): KubeConfig {
  const kc = new KubeConfig();
  if (kubeconfigPath) {
    if (!existsSync(kubeconfigPath)) throw new Error(`--kubeconfig ${kubeconfigPath}: file does not exist`);
    kc.loadFromFile(kubeconfigPath);
    return requireCluster(kc, `--kubeconfig ${kubeconfigPath}`);
  }
  if (env.KUBECONFIG) {
    kc.loadFromDefault();
    return requireCluster(kc, `KUBECONFIG=${env.KUBECONFIG}`);
  }
  if (env.KUBERNETES_SERVICE_HOST && existsSync(SA_TOKEN)) {
    kc.loadFromCluster();
    return kc;
  }
  const home = join(env.HOME ?? homedir(), ".kube", "config");
  if (existsSync(home)) {
    kc.loadFromFile(home);
    return requireCluster(kc, home);
  }
  throw new Error(
    "no Kubernetes configuration: pass --kubeconfig, set KUBECONFIG, run in a pod with a service account, or create ~/.kube/config",
  );
}

function requireCluster(kc: KubeConfig, source: string): KubeConfig {
  if (!kc.getCurrentCluster()) throw new Error(`${source}: the current context has no cluster`);
  return kc;
}
