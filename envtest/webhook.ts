// Admission webhooks against a test control plane (controller-runtime's envtest.WebhookInstallOptions):
// the configurations the project deploys (config/webhook/manifests.yaml, clientConfig.service pointing
// at the in-cluster Service) are rewritten to call a webhook server on this host, trusted through the
// test CA, and installed on the apiserver.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { extname, join } from "node:path";
import {
  AdmissionregistrationV1Api,
  ApiextensionsV1Api,
  ApiException,
  KubernetesObjectApi,
  type AdmissionregistrationV1WebhookClientConfig,
  type KubeConfig,
  type KubernetesObject,
  type V1MutatingWebhookConfiguration,
  type V1ValidatingWebhookConfiguration,
} from "@kubernetes/client-node";
import { parseAllDocuments } from "yaml";

/** What these helpers need of a TestEnv. */
export interface KubeEnv {
  readonly kubeConfig: KubeConfig;
}

export interface WebhookInstallOptions {
  mutating?: V1MutatingWebhookConfiguration[];
  validating?: V1ValidatingWebhookConfiguration[];
  /** Manifest files or directories (e.g. config/webhook) whose webhook configurations are installed too. */
  paths?: string[];
  /** The local webhook server's port. */
  port: number;
  /** Default 127.0.0.1; must be a name or address in the serving certificate. */
  host?: string;
  /** The CA that signed the serving certificate (PEM); becomes every webhook's caBundle. */
  caPEM: string | Buffer;
}

export interface InstalledWebhooks {
  /** The configurations as installed, with rewritten clientConfigs. */
  mutating: V1MutatingWebhookConfiguration[];
  validating: V1ValidatingWebhookConfiguration[];
}

/**
 * Points a webhook at the local server: a service reference becomes https://<host>:<port><path>, an
 * existing url keeps its path and query but gets the local origin, and caBundle becomes the test CA.
 */
export function localClientConfig(
  cc: AdmissionregistrationV1WebhookClientConfig | undefined,
  origin: string,
  caBundle: string,
): AdmissionregistrationV1WebhookClientConfig {
  let path = "/";
  if (cc?.service) path = cc.service.path ?? "/";
  else if (cc?.url) {
    const u = new URL(cc.url);
    path = `${u.pathname}${u.search}`;
  }
  return { url: `${origin}${path.startsWith("/") ? path : `/${path}`}`, caBundle };
}

function readManifests(paths: readonly string[]): KubernetesObject[] {
  const files: string[] = [];
  for (const p of paths) {
    if (statSync(p).isDirectory()) {
      for (const f of readdirSync(p).sort()) {
        if ([".yaml", ".yml", ".json"].includes(extname(f))) files.push(join(p, f));
      }
    } else {
      files.push(p);
    }
  }
  const out: KubernetesObject[] = [];
  for (const f of files) {
    for (const doc of parseAllDocuments(readFileSync(f, "utf8"))) {
      if (doc.errors.length > 0) throw new Error(`${f}: ${doc.errors[0]?.message ?? "invalid YAML"}`);
      const obj = doc.toJS() as KubernetesObject | null;
      if (obj) out.push(obj);
    }
  }
  return out;
}

function isNotFound(err: unknown): boolean {
  return err instanceof ApiException && err.code === 404;
}

function isConflict(err: unknown): boolean {
  return err instanceof ApiException && err.code === 409;
}

/** Creates or replaces the webhook configurations, rewritten to call https://<host>:<port>. */
export async function installWebhooks(env: KubeEnv, opts: WebhookInstallOptions): Promise<InstalledWebhooks> {
  const origin = `https://${(opts.host ?? "127.0.0.1").includes(":") ? `[${opts.host}]` : (opts.host ?? "127.0.0.1")}:${opts.port}`;
  const caBundle = Buffer.from(opts.caPEM).toString("base64");
  // Copies, so the caller's objects (often shared fixtures) keep their in-cluster clientConfig.
  const mutating = structuredClone(opts.mutating ?? []);
  const validating = structuredClone(opts.validating ?? []);
  for (const obj of readManifests(opts.paths ?? [])) {
    if (obj.kind === "MutatingWebhookConfiguration") mutating.push(obj as V1MutatingWebhookConfiguration);
    else if (obj.kind === "ValidatingWebhookConfiguration") validating.push(obj as V1ValidatingWebhookConfiguration);
  }
  for (const cfg of [...mutating, ...validating]) {
    if (!cfg.metadata?.name) throw new Error("a webhook configuration has no metadata.name");
    for (const w of cfg.webhooks ?? []) w.clientConfig = localClientConfig(w.clientConfig, origin, caBundle);
  }

  const api = env.kubeConfig.makeApiClient(AdmissionregistrationV1Api);
  const installed: InstalledWebhooks = { mutating: [], validating: [] };
  for (const body of mutating) {
    const name = body.metadata?.name ?? "";
    installed.mutating.push(
      await api.createMutatingWebhookConfiguration({ body }).catch(async (err: unknown) => {
        if (!isConflict(err)) throw err;
        const existing = await api.readMutatingWebhookConfiguration({ name });
        const metadata = { ...body.metadata, resourceVersion: existing.metadata?.resourceVersion };
        return api.replaceMutatingWebhookConfiguration({ name, body: { ...body, metadata } });
      }),
    );
  }
  for (const body of validating) {
    const name = body.metadata?.name ?? "";
    installed.validating.push(
      await api.createValidatingWebhookConfiguration({ body }).catch(async (err: unknown) => {
        if (!isConflict(err)) throw err;
        const existing = await api.readValidatingWebhookConfiguration({ name });
        const metadata = { ...body.metadata, resourceVersion: existing.metadata?.resourceVersion };
        return api.replaceValidatingWebhookConfiguration({ name, body: { ...body, metadata } });
      }),
    );
  }
  return installed;
}

/** Deletes the configurations (missing ones are fine). */
export async function uninstallWebhooks(
  env: KubeEnv,
  webhooks: { mutating?: KubernetesObject[]; validating?: KubernetesObject[] },
): Promise<void> {
  const api = env.kubeConfig.makeApiClient(AdmissionregistrationV1Api);
  const ignoreMissing = (err: unknown) => {
    if (!isNotFound(err)) throw err;
  };
  for (const cfg of webhooks.mutating ?? []) {
    const name = cfg.metadata?.name;
    if (name) await api.deleteMutatingWebhookConfiguration({ name }).then(() => undefined, ignoreMissing);
  }
  for (const cfg of webhooks.validating ?? []) {
    const name = cfg.metadata?.name;
    if (name) await api.deleteValidatingWebhookConfiguration({ name }).then(() => undefined, ignoreMissing);
  }
}

export interface WaitForWebhookOptions {
  /**
   * An object the webhooks under test intercept (it must match their rules and selectors). It is only
   * ever created with dryRun=All, so use a name that is free (or metadata.generateName).
   */
  probe: KubernetesObject;
  /**
   * True once the webhook server has seen the probe, e.g. a flag the test handler sets on dry-run
   * requests. Check every webhook that must be live: the apiserver loads mutating and validating
   * configurations independently.
   */
  seen: () => boolean;
  timeoutMs?: number;
  intervalMs?: number;
}

/**
 * Waits until the apiserver routes requests to the webhooks: it loads new configurations from a watch,
 * so for a moment after installWebhooks requests are admitted without calling them.
 */
export async function waitForWebhookReady(env: KubeEnv, opts: WaitForWebhookOptions): Promise<void> {
  const client = KubernetesObjectApi.makeApiClient(env.kubeConfig);
  const timeoutMs = opts.timeoutMs ?? 30_000;
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      await client.create(structuredClone(opts.probe), undefined, "All");
      lastError = undefined;
    } catch (err) {
      // A denial is an answer too; what matters is whether the handler saw the request.
      lastError = err;
    }
    if (opts.seen()) return;
    if (Date.now() > deadline) {
      const why = lastError instanceof Error ? `; the last dry-run create failed: ${lastError.message}` : "";
      throw new Error(`the apiserver did not call the webhooks within ${timeoutMs} ms${why}`);
    }
    await new Promise((r) => setTimeout(r, opts.intervalMs ?? 200));
  }
}

export interface ConversionInstallOptions {
  /** The CRD to give the conversion webhook (installed already, e.g. from config/crd/bases). */
  crdName: string;
  /**
   * The project's conversion patch (JSON 6902 `add`/`replace` operations, as config/crd/patches/ holds
   * them): applied as `make deploy` applies it, with its service clientConfig pointed at the local server.
   */
  patchPath: string;
  port: number;
  host?: string;
  caPEM: string | Buffer;
  timeoutMs?: number;
}

/**
 * The CRD's conversion webhook on the local server (controller-runtime's envtest does this for a CRD with
 * `conversion.strategy: Webhook`): the project's kustomize patch applied to the installed CRD, the
 * webhook's service reference rewritten to https://<host>:<port><path> with the test CA. Waits until every
 * version the patched CRD serves is discoverable and a list in each is converted.
 */
export async function installConversionWebhook(env: KubeEnv, opts: ConversionInstallOptions): Promise<void> {
  const host = opts.host ?? "127.0.0.1";
  const origin = `https://${host.includes(":") ? `[${host}]` : host}:${opts.port}`;
  const caBundle = Buffer.from(opts.caPEM).toString("base64");
  const ops = (parseAllDocuments(readFileSync(opts.patchPath, "utf8"))[0]?.toJS() ?? []) as Array<{
    op: string;
    path: string;
    value?: unknown;
  }>;
  const api = env.kubeConfig.makeApiClient(ApiextensionsV1Api);
  const crd = (await api.readCustomResourceDefinition({ name: opts.crdName })) as unknown as Record<string, unknown>;
  for (const op of ops) applyOperation(crd, op, opts.patchPath);
  const spec = crd.spec as { conversion?: { webhook?: { clientConfig?: AdmissionregistrationV1WebhookClientConfig } } };
  const webhook = spec.conversion?.webhook;
  if (!webhook) throw new Error(`${opts.patchPath} sets no spec.conversion.webhook`);
  webhook.clientConfig = localClientConfig(webhook.clientConfig, origin, caBundle);
  await api.replaceCustomResourceDefinition({ name: opts.crdName, body: crd as never });

  const served = crd.spec as {
    group: string;
    names: { plural: string };
    versions: Array<{ name: string; served: boolean }>;
  };
  const objects = KubernetesObjectApi.makeApiClient(env.kubeConfig);
  const deadline = Date.now() + (opts.timeoutMs ?? 30_000);
  for (const v of served.versions.filter((x) => x.served)) {
    for (;;) {
      try {
        // A list in a version that is not the storage version goes through the webhook for every object.
        await objects.list(`${served.group}/${v.name}`, (crd.spec as { names: { kind: string } }).names.kind);
        break;
      } catch (err) {
        if (Date.now() > deadline) {
          throw new Error(
            `${opts.crdName} ${v.name} was not served through the conversion webhook in time: ${err instanceof Error ? err.message : String(err)}`,
          );
        }
        await new Promise((r) => setTimeout(r, 200));
      }
    }
  }
}

/** One JSON 6902 `add` or `replace` (what a kustomize patch in config/ uses), in place. */
function applyOperation(obj: Record<string, unknown>, op: { op: string; path: string; value?: unknown }, file: string) {
  if (op.op !== "add" && op.op !== "replace") throw new Error(`${file}: ${op.op} ${op.path}: only add and replace`);
  const keys = op.path
    .split("/")
    .slice(1)
    .map((k) => k.replaceAll("~1", "/").replaceAll("~0", "~"));
  const last = keys.pop();
  let cur: unknown = obj;
  for (const k of keys) {
    cur = Array.isArray(cur) ? cur[Number(k)] : (cur as Record<string, unknown> | undefined)?.[k];
    if (cur === null || typeof cur !== "object") throw new Error(`${file}: ${op.op} ${op.path}: no such parent`);
  }
  if (last === undefined) throw new Error(`${file}: ${op.op} with an empty path`);
  if (Array.isArray(cur)) cur[Number(last)] = op.value;
  else (cur as Record<string, unknown>)[last] = op.value;
}
