// `kubectl cron __complete WORDS...` (what kubectl_complete-cron runs). Loads only model/args.ts, completion.ts and the
// kubeconfig reader up front: commands and flags complete without the client, zod, prom-client or the API types,
// which are imported (a split point of the bundle, docs/run-now-and-the-plugin.md) only to complete a name (a
// CronJob's, a ConcurrencyGroup's).
import type { CronJob } from "../../../api/v1/index.ts";
import type { Client } from "../../../runtime/client.ts";
import { type LoadedKubeConfig, loadKubeConfig } from "../../../runtime/kubeconfig.ts";
import { complete, formatCompletion, type CompletionSources } from "./completion.ts";

/** Never fails, never prints errors: a word that cannot be completed gets no candidates. */
export async function completion(
  words: readonly string[],
  io: { stdout: (s: string) => void; env: NodeJS.ProcessEnv },
): Promise<number> {
  const flag = (long: string, short?: string) => {
    const i = words.findIndex((w, j) => j < words.length - 1 && (w === `--${long}` || (short && w === `-${short}`)));
    if (i >= 0) return words[i + 1];
    return words.find((w) => w.startsWith(`--${long}=`))?.slice(long.length + 3);
  };
  let kc: LoadedKubeConfig | undefined;
  let client: Client | undefined;
  const config = () => (kc ??= loadKubeConfig(flag("kubeconfig"), io.env, flag("context")));
  const connect = async () => {
    const [{ Client }, { FIELD_MANAGER }] = await Promise.all([
      import("../../../runtime/client.ts"),
      import("./commands.ts"),
    ]);
    client ??= new Client(config(), { userAgent: FIELD_MANAGER, timeoutMs: 5_000 });
    return { kc: config(), client };
  };
  const sources: CompletionSources = {
    async cronJobNames(kind, namespace) {
      const { kc, client } = await connect();
      const [{ CronJobResource }, { builtinCronJobKind }, { discoverBuiltinVersion }] = await Promise.all([
        import("../../../api/v1/index.ts"),
        import("../model/builtin.ts"),
        import("../read/builtin.ts"),
      ]);
      const ns = namespace ?? kc.getNamespace() ?? "default";
      const rk = kind === "ours" ? CronJobResource : builtinCronJobKind(await discoverBuiltinVersion(client));
      const items = (await client.list<CronJob>(rk, { namespace: ns, limit: 500 })).items;
      return items.map((c) => c.metadata.name ?? "").sort();
    },
    async groupNames(namespace) {
      const { kc, client } = await connect();
      const { ConcurrencyGroupResource } = await import("../../../api/v1/index.ts");
      const ns = namespace ?? kc.getNamespace() ?? "default";
      const items = (await client.list(ConcurrencyGroupResource, { namespace: ns, limit: 500 })).items;
      return items.map((g) => g.metadata?.name ?? "").sort();
    },
    async namespaces() {
      const { client } = await connect();
      const { Kinds } = await import("../../../runtime/kinds.ts");
      const items = (await client.list(Kinds.Namespace, { limit: 500 })).items;
      return items.map((n) => n.metadata?.name ?? "").sort();
    },
    contexts() {
      try {
        return config()
          .getContexts()
          .map((c) => c.name);
      } catch {
        return [];
      }
    },
  };
  let result;
  try {
    result = await complete(words, sources);
  } catch {
    result = { candidates: [], directive: 4 };
  }
  io.stdout(formatCompletion(result));
  return 0;
}
