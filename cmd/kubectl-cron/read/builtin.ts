// Which version of the built-in CronJob the cluster serves: asked of its discovery endpoints, once a migrate or
// unmigrate.
import type { Client } from "../../../runtime/client.ts";
import { APIError, isNotFound } from "../../../runtime/errors.ts";
import { BUILTIN_VERSIONS, type BuiltinVersion } from "../model/builtin.ts";

/** What the discovery endpoints answer: the preferred version first (batch/v1), else batch/v1beta1. */
export async function discoverBuiltinVersion(client: Client): Promise<BuiltinVersion> {
  for (const version of BUILTIN_VERSIONS) {
    try {
      const list = await client.request<{ resources?: { name?: string }[] }>("GET", `/apis/batch/${version}`);
      if ((list.resources ?? []).some((r) => r.name === "cronjobs")) return version;
    } catch (e) {
      // A version the cluster does not serve at all answers 404.
      if (!isNotFound(e) && !(e instanceof APIError && e.code === 404)) throw e;
    }
  }
  throw new Error("the cluster serves no built-in CronJob (neither batch/v1 nor batch/v1beta1 lists cronjobs)");
}
