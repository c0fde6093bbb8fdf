// Where the manager's cluster credentials come from, in controller-runtime's order: --kubeconfig,
// $KUBECONFIG, the in-cluster service account, then ~/.kube/config.
//
// The common cases are read here without @kubernetes/client-node (its generated API loads with any import,
// and its memory with it: docs/operating.md, "The figures behind the code's rules"): the in-cluster service account (token file + CA) and kubeconfig
// files whose user has a token, a token file, a client certificate or a username/password. A user with an
// exec plugin or an auth-provider (OIDC, gcp, azure) needs client-node's authenticators: only then is it
// imported, on the first request (applyToHTTPSOptions is async).
import { existsSync, readFileSync } from "node:fs";
import type { RequestOptions } from "node:https";
import { createRequire } from "node:module";
import { isIPv6 } from "node:net";
import { homedir } from "node:os";
import { delimiter, dirname, isAbsolute, join } from "node:path";
import type { KubeConfig } from "@kubernetes/client-node";
import type { parse as parseYAML } from "yaml";

export const SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount";
const SA_TOKEN = `${SERVICE_ACCOUNT_DIR}/token`;

/**
 * What runtime/client.ts needs of a cluster configuration: the server, then (re-read every minute) the
 * TLS material and the headers of a request. @kubernetes/client-node's KubeConfig has this shape too.
 */
export interface RESTConfig {
  getCurrentCluster(): { readonly server: string } | null;
  /** Sets ca/cert/key/rejectUnauthorized/servername, `auth` (basic) and headers (Authorization, Impersonate-User). */
  applyToHTTPSOptions(o: RequestOptions): Promise<void>;
}

/** A kubeconfig cluster, named as client-node names it (so a fallback can hand it over as it is). */
interface KubeconfigCluster {
  readonly name: string;
  readonly server: string;
  readonly caData?: string;
  readonly caFile?: string;
  readonly skipTLSVerify: boolean;
  readonly tlsServerName?: string;
  readonly proxyUrl?: string;
}

interface KubeconfigUser {
  readonly name: string;
  readonly token?: string;
  /** Re-read on every applyToHTTPSOptions (the client calls it every minute): bound tokens rotate. */
  readonly tokenFile?: string;
  readonly certData?: string;
  readonly certFile?: string;
  readonly keyData?: string;
  readonly keyFile?: string;
  readonly username?: string;
  readonly password?: string;
  readonly impersonateUser?: string;
  readonly impersonateUid?: string;
  readonly impersonateGroups?: readonly string[];
  readonly impersonateExtra?: Readonly<Record<string, readonly string[]>>;
  readonly exec?: unknown;
  readonly authProvider?: unknown;
}

interface KubeconfigContext {
  readonly name: string;
  readonly cluster: string;
  readonly user?: string;
  readonly namespace?: string;
}

interface KubeconfigData {
  clusters: KubeconfigCluster[];
  users: KubeconfigUser[];
  contexts: KubeconfigContext[];
  currentContext: string | undefined;
}

/** A loaded configuration: a kubeconfig's current context, or the in-cluster service account. */
export class LoadedKubeConfig implements RESTConfig {
  readonly data: KubeconfigData;
  private clientNode: Promise<KubeConfig> | undefined;
  private lastToken: string | undefined;

  constructor(data: KubeconfigData) {
    this.data = data;
  }

  getCurrentContext(): string | undefined {
    return this.data.currentContext;
  }

  getContexts(): readonly KubeconfigContext[] {
    return this.data.contexts;
  }

  /** Makes `name` the current context (kubectl's --context); an unknown name is an error. */
  setCurrentContext(name: string): void {
    if (!this.getContextObject(name)) throw new Error(`no context ${JSON.stringify(name)} in the kubeconfig`);
    this.data.currentContext = name;
    this.clientNode = undefined;
  }

  getContextObject(name: string | undefined): KubeconfigContext | null {
    return this.data.contexts.find((c) => c.name === name) ?? null;
  }

  getCurrentCluster(): KubeconfigCluster | null {
    const ctx = this.getContextObject(this.data.currentContext);
    return ctx ? (this.data.clusters.find((c) => c.name === ctx.cluster) ?? null) : null;
  }

  getCurrentUser(): KubeconfigUser | null {
    const ctx = this.getContextObject(this.data.currentContext);
    return ctx?.user !== undefined ? (this.data.users.find((u) => u.name === ctx.user) ?? null) : null;
  }

  /** The current context's namespace, if it names one. */
  getNamespace(): string | undefined {
    return this.getContextObject(this.data.currentContext)?.namespace;
  }

  /** Whether the current user needs @kubernetes/client-node's authenticators (exec plugin, auth-provider). */
  needsClientNode(): boolean {
    const user = this.getCurrentUser();
    return !!user && (!!user.exec || !!user.authProvider);
  }

  async applyToHTTPSOptions(o: RequestOptions): Promise<void> {
    if (this.needsClientNode()) {
      this.clientNode ??= this.loadClientNode();
      const kc = await this.clientNode;
      await kc.applyToHTTPSOptions(o);
      return;
    }
    const cluster = this.getCurrentCluster();
    if (cluster) {
      if (cluster.skipTLSVerify) o.rejectUnauthorized = false;
      if (cluster.tlsServerName) o.servername = cluster.tlsServerName;
      const ca = fileOrData(cluster.caFile, cluster.caData);
      if (ca) o.ca = ca;
    }
    const user = this.getCurrentUser();
    if (!user) return;
    const cert = fileOrData(user.certFile, user.certData);
    if (cert) o.cert = cert;
    const key = fileOrData(user.keyFile, user.keyData);
    if (key) o.key = key;
    const headers = (o.headers ??= {}) as Record<string, string | string[]>;
    if (user.impersonateUser != null) headers["Impersonate-User"] = user.impersonateUser;
    if (user.impersonateUid != null) headers["Impersonate-Uid"] = user.impersonateUid;
    // One header line per group and per extra value, as client-go sends them.
    if (user.impersonateGroups?.length) headers["Impersonate-Group"] = [...user.impersonateGroups];
    for (const [k, v] of Object.entries(user.impersonateExtra ?? {})) {
      headers[`Impersonate-Extra-${encodeURIComponent(k)}`] = [...v];
    }
    if (user.username) o.auth = `${user.username}:${user.password ?? ""}`;
    const token = user.token ?? (user.tokenFile ? this.readToken(user.tokenFile) : undefined);
    if (token) headers.Authorization = `Bearer ${token}`;
  }

  /** The token file's current content; a failed re-read keeps the last token (client-go's cached source). */
  private readToken(file: string): string {
    try {
      this.lastToken = readFileSync(file, "utf8").trim();
    } catch (err) {
      if (this.lastToken === undefined) throw err;
    }
    return this.lastToken;
  }

  /** client-node's KubeConfig for the same entries, for the authenticators only it has. */
  private async loadClientNode(): Promise<KubeConfig> {
    const { KubeConfig } = await import("@kubernetes/client-node");
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: this.data.clusters,
      // client-node reads a token file once, when it loads the file.
      users: this.data.users.map((u) =>
        u.token === undefined && u.tokenFile ? { ...u, token: readFileSync(u.tokenFile, "utf8").trim() } : u,
      ),
      contexts: this.data.contexts.map((c) => ({ ...c, user: c.user ?? "" })),
      currentContext: this.data.currentContext ?? "",
    });
    return kc;
  }
}

/**
 * The configuration, from the first of --kubeconfig, $KUBECONFIG (files merged), the in-cluster service
 * account, ~/.kube/config. `context` (kubectl's --context) replaces the file's current context. The manager
 * and the kubectl plugin both load through here (one loader; see docs/architecture.md, "One kubeconfig loader", for why not
 * client-node's).
 */
export function loadKubeConfig(
  kubeconfigPath?: string,
  env: NodeJS.ProcessEnv = process.env,
  context?: string,
): LoadedKubeConfig {
  if (kubeconfigPath) {
    if (!existsSync(kubeconfigPath)) throw new Error(`--kubeconfig ${kubeconfigPath}: file does not exist`);
    return select(kubeconfigFromFiles([kubeconfigPath]), `--kubeconfig ${kubeconfigPath}`, context);
  }
  if (env.KUBECONFIG) {
    const files = env.KUBECONFIG.split(delimiter).filter(Boolean);
    const present = files.filter((f) => existsSync(f));
    // As kubectl: files that do not exist are skipped; none at all is an error.
    if (present.length === 0) throw new Error(`KUBECONFIG=${env.KUBECONFIG}: no such file`);
    return select(kubeconfigFromFiles(present), `KUBECONFIG=${env.KUBECONFIG}`, context);
  }
  if (env.KUBERNETES_SERVICE_HOST && existsSync(SA_TOKEN)) return select(inClusterConfig(env), "in-cluster", context);
  const home = join(env.HOME ?? homedir(), ".kube", "config");
  if (existsSync(home)) return select(kubeconfigFromFiles([home]), home, context);
  throw new Error(
    "no Kubernetes configuration: pass --kubeconfig, set KUBECONFIG, run in a pod with a service account, or create ~/.kube/config",
  );
}

function select(kc: LoadedKubeConfig, source: string, context: string | undefined): LoadedKubeConfig {
  if (context !== undefined) {
    if (!kc.getContextObject(context)) {
      throw new ContextNotFoundError(`--context: no context ${JSON.stringify(context)} in ${source}`);
    }
    kc.setCurrentContext(context);
  }
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error(`${source}: the current context has no cluster`);
  // Going around a proxy the kubeconfig names would be worse than not connecting: say so instead.
  if (cluster.proxyUrl) {
    throw new Error(
      `${source}: cluster "${cluster.name}" has proxy-url ${JSON.stringify(cluster.proxyUrl)}, which this client does not support (it connects to the server directly); use a kubeconfig without it`,
    );
  }
  return kc;
}

/** --context names a context the configuration does not have. */
export class ContextNotFoundError extends Error {}

/**
 * The in-cluster configuration (client-go's InClusterConfig): https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT,
 * the service account's CA, and its token, re-read every minute (bound tokens rotate).
 */
export function inClusterConfig(env: NodeJS.ProcessEnv = process.env, dir = SERVICE_ACCOUNT_DIR): LoadedKubeConfig {
  const host = env.KUBERNETES_SERVICE_HOST ?? "";
  const port = env.KUBERNETES_SERVICE_PORT ?? "";
  // As client-node's loadFromCluster: the plain-HTTP ports of old apiservers and proxies.
  const scheme = port === "80" || port === "8080" || port === "8001" ? "http" : "https";
  const server = `${scheme}://${isIPv6(host) ? `[${host}]` : host}:${port}`;
  let namespace: string | undefined;
  try {
    namespace = readFileSync(join(dir, "namespace"), "utf8").trim() || undefined;
  } catch {
    namespace = undefined;
  }
  return new LoadedKubeConfig({
    clusters: [{ name: "inCluster", server, caFile: join(dir, "ca.crt"), skipTLSVerify: false }],
    users: [{ name: "inClusterUser", tokenFile: join(dir, "token") }],
    contexts: [
      { name: "inClusterContext", cluster: "inCluster", user: "inClusterUser", ...(namespace ? { namespace } : {}) },
    ],
    currentContext: "inClusterContext",
  });
}

/**
 * One or more kubeconfig files, merged as client-node merges $KUBECONFIG: the first file, then each later
 * one's entries appended (a name defined twice is an error) and its current-context, if set, taking over.
 * Relative file references are resolved against the directory of the file naming them.
 */
function kubeconfigFromFiles(files: string[]): LoadedKubeConfig {
  const data: KubeconfigData = { clusters: [], users: [], contexts: [], currentContext: undefined };
  for (const [i, file] of files.entries()) {
    const one = parseKubeconfig(readFileSync(file, "utf8"), dirname(file));
    if (i === 0) {
      Object.assign(data, one);
      continue;
    }
    if (one.currentContext) data.currentContext = one.currentContext;
    appendUnique(data.clusters, one.clusters, "cluster");
    appendUnique(data.users, one.users, "user");
    appendUnique(data.contexts, one.contexts, "context");
  }
  return new LoadedKubeConfig(data);
}

function appendUnique<T extends { name: string }>(into: T[], more: T[], what: string): void {
  for (const e of more) {
    if (into.some((x) => x.name === e.name)) throw new Error(`Duplicate ${what}: ${e.name}`);
    into.push(e);
  }
}

/**
 * A kubeconfig's text (YAML or JSON) as entries, with client-node's checks and messages (a cluster needs a
 * name and a server, a context a name and a cluster, a user a name).
 */
export function parseKubeconfig(text: string, baseDir?: string): KubeconfigData {
  const doc = parseYAMLOrJSON(text);
  const obj = (doc && typeof doc === "object" ? doc : {}) as Record<string, unknown>;
  const path = (p: unknown): string | undefined =>
    typeof p === "string" && p ? (baseDir && !isAbsolute(p) ? join(baseDir, p) : p) : undefined;
  const clusters = entries(obj.clusters).map((e, i): KubeconfigCluster => {
    if (!e.name) throw new Error(`clusters[${i}].name is missing`);
    const c = record(e.cluster);
    if (!c) throw new Error(`clusters[${i}].cluster is missing`);
    if (!c.server) throw new Error(`clusters[${i}].cluster.server is missing`);
    return compact({
      name: String(e.name),
      server: String(c.server).replace(/\/$/, ""),
      caData: str(c["certificate-authority-data"]),
      caFile: path(c["certificate-authority"]),
      skipTLSVerify: c["insecure-skip-tls-verify"] === true,
      tlsServerName: str(c["tls-server-name"]),
      proxyUrl: str(c["proxy-url"]),
    });
  });
  const users = entries(obj.users).map((e, i): KubeconfigUser => {
    if (!e.name) throw new Error(`users[${i}].name is missing`);
    const u = record(e.user) ?? {};
    return compact({
      name: String(e.name),
      token: str(u.token),
      tokenFile: path(u["token-file"] ?? u.tokenFile),
      certData: str(u["client-certificate-data"]),
      certFile: path(u["client-certificate"]),
      keyData: str(u["client-key-data"]),
      keyFile: path(u["client-key"]),
      username: str(u.username),
      password: str(u.password),
      impersonateUser: str(u.as),
      impersonateUid: str(u["as-uid"]),
      impersonateGroups: strings(u["as-groups"]),
      impersonateExtra: extras(u["as-user-extra"]),
      exec: u.exec ?? undefined,
      authProvider: u["auth-provider"] ?? undefined,
    });
  });
  const contexts = entries(obj.contexts).map((e, i): KubeconfigContext => {
    if (!e.name) throw new Error(`contexts[${i}].name is missing`);
    const c = record(e.context);
    if (!c) throw new Error(`contexts[${i}].context is missing`);
    if (!c.cluster) throw new Error(`contexts[${i}].context.cluster is missing`);
    return compact({
      name: String(e.name),
      cluster: String(c.cluster),
      user: str(c.user),
      namespace: str(c.namespace),
    });
  });
  return { clusters, users, contexts, currentContext: str(obj["current-context"]) };
}

/** JSON (what most generated kubeconfigs are) is parsed as such; YAML loads the `yaml` package on demand. */
function parseYAMLOrJSON(text: string): unknown {
  if (/^\s*\{/.test(text)) {
    try {
      return JSON.parse(text);
    } catch {
      // a YAML flow mapping: the YAML parser below reads it
    }
  }
  const yaml = createRequire(import.meta.url)("yaml") as { parse: typeof parseYAML };
  return yaml.parse(text);
}

function entries(v: unknown): Record<string, unknown>[] {
  return Array.isArray(v) ? v.map((e) => record(e) ?? {}) : [];
}

function record(v: unknown): Record<string, unknown> | undefined {
  return v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
}

function str(v: unknown): string | undefined {
  return typeof v === "string" && v !== "" ? v : undefined;
}

function strings(v: unknown): string[] | undefined {
  return Array.isArray(v) && v.length > 0 ? v.map(String) : undefined;
}

function extras(v: unknown): Record<string, string[]> | undefined {
  const r = record(v);
  if (!r) return undefined;
  const out: Record<string, string[]> = {};
  for (const [k, vs] of Object.entries(r)) out[k] = Array.isArray(vs) ? vs.map(String) : [String(vs)];
  return out;
}

/** Drops undefined fields, so entries carry only what the kubeconfig says. */
function compact<T extends object>(o: T): T {
  for (const k of Object.keys(o) as (keyof T)[]) if (o[k] === undefined) delete o[k];
  return o;
}

function fileOrData(file: string | undefined, data: string | undefined): Buffer | undefined {
  if (file) return readFileSync(file);
  if (data) return Buffer.from(data, "base64");
  return undefined;
}
