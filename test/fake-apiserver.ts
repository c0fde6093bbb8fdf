// A kube-apiserver over HTTP for tests of `kubectl cron` through its own entry point (main(): kubeconfig,
// Client, discovery, clientAPI): the discovery documents a given Kubernetes version answers (recorded, e.g.
// test/fixtures/builtin-v1/), and the object endpoints the plugin calls, over one in-memory FakeClient store,
// which a ReconcileHarness can share, so that our reconciler runs on the very objects the plugin wrote.
//
// What it keeps of the apiserver: a group/version is served only if its discovery document lists the
// resource (else 404, as for batch/v1beta1 CronJobs from 1.25 on); objects of a kind are the same whatever
// version is asked (apiVersion set to the one asked; list items without kind and apiVersion, as the apiserver
// sends them); GET, LIST (labelSelector, limit/continue), POST (dryRun=All), PATCH (JSON merge patch and JSON
// patch, of the object or its status subresource), DELETE (preconditions; propagationPolicy Orphan takes the
// owner reference off the dependents, as the garbage collector does); GET /version, and a Date header on every
// answer (its clock, which a test can set apart from the store's to stage a skew); Status errors; this operator's admission
// webhooks (mutating and validating, static checks) on its CronJobs, their denial worded as the apiserver
// words it. What it does not: schemas, pruning and the built-in kinds' defaulting and validation (recorded
// objects carry the defaults already), watches, server-side apply.
import { once } from "node:events";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { API_VERSION, CronJobResource, GROUP } from "../api/v1/index.ts";
import { APIError } from "../runtime/errors.ts";
import { FakeClient } from "../runtime/fake/client.ts";
import { Kinds, type KubeObject, type ResourceKind, resourceName } from "../runtime/kinds.ts";
import { isObj } from "../runtime/objects.ts";
import type { AdmissionRequest, AdmissionResult, JSONPatchOperation } from "../runtime/webhook/admission.ts";
import { mutateCronJob, validateCronJobRequest } from "../webhooks/cronjob_webhook.ts";

type Obj = Record<string, unknown>;

interface APIResource {
  name: string;
  kind: string;
  namespaced: boolean;
}

/** Discovery documents by path: "/apis/batch" (APIGroup), "/apis/batch/v1" (APIResourceList), ... */
export type DiscoveryDocuments = Record<string, unknown>;

/** Our CRDs' discovery document (CronJob, ConcurrencyGroup, ExclusionCalendar), as the apiserver serves it once they are installed. */
const OUR_RESOURCES = {
  kind: "APIResourceList",
  apiVersion: "v1",
  groupVersion: API_VERSION,
  resources: [
    { name: "cronjobs", singularName: "cronjob", namespaced: true, kind: "CronJob", verbs: ["get", "list", "patch"] },
    { name: "cronjobs/status", singularName: "", namespaced: true, kind: "CronJob", verbs: ["get", "patch", "update"] },
    {
      name: "concurrencygroups",
      singularName: "concurrencygroup",
      namespaced: true,
      kind: "ConcurrencyGroup",
      verbs: ["get", "list", "patch"],
    },
    {
      name: "exclusioncalendars",
      singularName: "exclusioncalendar",
      namespaced: true,
      kind: "ExclusionCalendar",
      verbs: ["get", "list", "patch"],
    },
  ],
};

/** The webhook configuration's names (config/webhook/manifests.yaml), as a denial names them. */
const VALIDATING_WEBHOOK = "vcronjob-v1.kb.io";

/** RFC 7386. */
export function jsonMergePatch(target: unknown, patch: unknown): unknown {
  if (!isObj(patch)) return structuredClone(patch);
  const out: Obj = isObj(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = jsonMergePatch(out[k], v);
  }
  return out;
}

/** RFC 6902, the operations a client of this fake sends (add, replace, remove). */
function jsonPatch(target: unknown, ops: readonly JSONPatchOperation[]): unknown {
  const doc = structuredClone(target) as Obj;
  for (const op of ops) {
    const keys = op.path
      .split("/")
      .slice(1)
      .map((k) => k.replaceAll("~1", "/").replaceAll("~0", "~"));
    const last = keys.pop();
    if (last === undefined) throw new APIError(422, "Invalid", `JSON patch: empty path`);
    let at: unknown = doc;
    for (const k of keys) {
      at = Array.isArray(at) ? at[Number(k)] : isObj(at) ? at[k] : undefined;
      if (at === undefined) throw new APIError(422, "Invalid", `JSON patch: no such path ${op.path}`);
    }
    if (!isObj(at) && !Array.isArray(at)) throw new APIError(422, "Invalid", `JSON patch: no such path ${op.path}`);
    const parent = at as Obj;
    if (op.op === "add" || op.op === "replace") {
      if (Array.isArray(parent) && op.op === "add") {
        parent.splice(last === "-" ? parent.length : Number(last), 0, structuredClone(op.value));
      } else parent[last] = structuredClone(op.value);
    } else if (op.op === "remove") {
      if (Array.isArray(parent)) parent.splice(Number(last), 1);
      else delete parent[last];
    } else throw new APIError(422, "Invalid", `JSON patch: op ${op.op} is not supported by the fake`);
  }
  return doc;
}

function statusBody(e: APIError): Obj {
  return {
    kind: "Status",
    apiVersion: "v1",
    metadata: {},
    status: "Failure",
    message: e.message,
    reason: e.reason,
    details: { ...(e.details ?? {}), ...(e.causes && e.causes.length > 0 ? { causes: e.causes } : {}) },
    code: e.code,
  };
}

/** What the apiserver answers when a validating webhook denies a request (admission ToStatusErr). */
function webhookDenial(result: AdmissionResult): APIError {
  const s = result.status ?? {};
  const code = (s.code ?? 0) < 400 ? 400 : s.code!;
  const message = `admission webhook "${VALIDATING_WEBHOOK}" denied the request: ${s.message ?? s.reason ?? ""}`;
  return new APIError(code, (s.reason ?? "BadRequest") as APIError["reason"], message, {
    causes: s.details?.causes ?? [],
    ...(s.details ? { details: s.details as Record<string, unknown> } : {}),
  });
}

interface Served {
  /** The store's kind: the first version a discovery document serves it in. */
  rk: ResourceKind;
  /** group/version → served there. */
  versions: Set<string>;
}

export interface FakeAPIServerOptions {
  /** The discovery documents of the Kubernetes version to play (our CRD's is added). */
  discovery: DiscoveryDocuments;
  /** Its answer (a Status) for a path it does not serve, such as a group/version it has not. */
  notFound: unknown;
  /** creationTimestamps (and the store's other times); the fake's own clock by default. */
  now?: () => Date;
  /** What GET /version answers (the build's version info); a 1.32 apiserver's by default. */
  version?: Record<string, string>;
}

/** One request as the fake received it: `GET /apis/batch/v1/namespaces/prod/cronjobs/report?...`. */
interface Received {
  method: string;
  path: string;
  query: URLSearchParams;
  body: unknown;
}

export class FakeAPIServer {
  readonly store: FakeClient;
  /** Every request, reads included, in order. */
  readonly requests: Received[] = [];
  /** Where the store's times come from (a test points it at its reconciler's clock). */
  now: () => Date;
  /** The clock its answers' Date header tells (whole seconds, as HTTP has them): `now` unless a test sets another. */
  date: () => Date;
  /**
   * The connection dies before this write reaches the store (every write, dry runs excluded, counts from 1):
   * what a plugin killed or cut off at that point leaves behind. Undefined: every write is made.
   */
  dropWrite: number | undefined;
  /** Answers a request with this error instead of serving it (authorization, say); undefined: served. */
  deny: ((r: Received) => APIError | undefined) | undefined;
  /** Called after each write the store made (a test plays another controller there, e.g. the built-in one). */
  afterWrite: ((r: Received) => void | Promise<void>) | undefined;
  /** How many writes (dry runs excluded) it has received, a dropped one included. */
  writes = 0;
  private readonly discovery: DiscoveryDocuments;
  private readonly notFound: unknown;
  private readonly version: Record<string, string>;
  private readonly served = new Map<string, Served>();
  private server: Server | undefined;
  private dir: string | undefined;
  private uidMap = new Map<string, string>();

  constructor(o: FakeAPIServerOptions) {
    this.now = o.now ?? (() => new Date());
    this.date = () => this.now();
    this.version = o.version ?? { major: "1", minor: "32", gitVersion: "v1.32.0", platform: "linux/amd64" };
    this.store = new FakeClient({ now: () => this.now() });
    this.notFound = o.notFound;
    this.discovery = { ...o.discovery, [`/apis/${API_VERSION}`]: OUR_RESOURCES };
    for (const [path, doc] of Object.entries(this.discovery)) {
      if (!isObj(doc) || doc.kind !== "APIResourceList" || typeof doc.groupVersion !== "string") continue;
      const [group, version] = doc.groupVersion.includes("/") ? doc.groupVersion.split("/") : ["", doc.groupVersion];
      if (path !== `/apis/${doc.groupVersion}` && path !== `/api/${doc.groupVersion}`) {
        throw new Error(`discovery document at ${path} is for ${doc.groupVersion}`);
      }
      for (const r of (doc.resources ?? []) as APIResource[]) {
        if (r.name.includes("/")) continue;
        const key = resourceName({ group: group!, plural: r.name } as ResourceKind);
        const s = this.served.get(key) ?? {
          rk: { group: group!, version: version!, kind: r.kind, plural: r.name, namespaced: r.namespaced },
          versions: new Set<string>(),
        };
        s.versions.add(doc.groupVersion);
        this.served.set(key, s);
      }
    }
  }

  /** Listens on 127.0.0.1 and writes a kubeconfig for it (namespace `namespace` in its context). */
  async start(namespace = "default"): Promise<this> {
    this.server = createServer((req, res) => void this.handle(req, res));
    this.server.listen(0, "127.0.0.1");
    await once(this.server, "listening");
    this.dir = mkdtempSync(join(tmpdir(), "fake-apiserver-"));
    writeFileSync(
      this.kubeconfigPath,
      [
        "apiVersion: v1",
        "kind: Config",
        "clusters:",
        // @kubernetes/client-node takes plain HTTP only with TLS verification off.
        `- name: fake\n  cluster:\n    server: ${this.url}\n    insecure-skip-tls-verify: true`,
        "users:",
        "- name: tester\n  user:\n    token: fake-token",
        "contexts:",
        `- name: fake\n  context:\n    cluster: fake\n    user: tester\n    namespace: ${namespace}`,
        "current-context: fake",
        "",
      ].join("\n"),
    );
    return this;
  }

  /** Where it listens, e.g. http://127.0.0.1:41234. */
  get url(): string {
    const address = this.server?.address() as AddressInfo | null | undefined;
    if (!address) throw new Error("FakeAPIServer: not started");
    return `http://127.0.0.1:${address.port}`;
  }

  get kubeconfigPath(): string {
    if (!this.dir) throw new Error("FakeAPIServer: not started");
    return join(this.dir, "kubeconfig");
  }

  async stop(): Promise<void> {
    if (this.server) {
      this.server.closeAllConnections();
      this.server.close();
      await once(this.server, "close");
    }
    if (this.dir) rmSync(this.dir, { recursive: true, force: true });
  }

  /** The store's kind for objects of this apiVersion and kind (as recorded objects name them). */
  kindOf(apiVersion: string, kind: string): ResourceKind {
    for (const s of this.served.values()) {
      if (s.rk.kind === kind && s.versions.has(apiVersion)) return s.rk;
    }
    throw new Error(`the fake serves no ${kind} in ${apiVersion}`);
  }

  /**
   * Put recorded objects (as `GET` returned them; list items with `kind` and `apiVersion` given) into the store.
   * The store assigns new UIDs, as any apiserver does to a created object: references between the objects
   * (ownerReferences, status.active) are rewritten to them, and `uid(recorded)` maps a recorded UID to its
   * new one. creationTimestamp, labels, annotations, managedFields, spec and status stay as recorded.
   */
  async seed(...objects: KubeObject[]): Promise<void> {
    const saved = this.now;
    const created: Array<{ rk: ResourceKind; obj: KubeObject }> = [];
    try {
      for (const recorded of objects) {
        const rk = this.kindOf(recorded.apiVersion ?? "", recorded.kind ?? "");
        const obj = this.remap(recorded) as KubeObject & Obj;
        const { status: _status, ...rest } = obj;
        const meta = { ...rest.metadata };
        delete meta.uid;
        delete meta.resourceVersion;
        const at = meta.creationTimestamp;
        this.now = () => (at ? new Date(at) : saved());
        const made = await this.store.create(rk, { ...rest, metadata: meta });
        if (recorded.metadata?.uid) this.uidMap.set(recorded.metadata.uid, made.metadata!.uid!);
        created.push({ rk, obj: recorded });
      }
      // Statuses last: they refer to objects created after their own (a CronJob's active Jobs).
      for (const { rk, obj } of created) {
        const status = (this.remap(obj) as Obj).status;
        if (status === undefined) continue;
        this.now = () => saved();
        const cur = await this.store.get(rk, obj.metadata?.namespace, obj.metadata!.name!);
        await this.store.updateStatus(rk, { ...cur, status } as KubeObject);
      }
    } finally {
      this.now = saved;
    }
  }

  /** The store's UID of a recorded object (by its recorded UID). */
  uid(recorded: string): string {
    const u = this.uidMap.get(recorded);
    if (!u) throw new Error(`no object with recorded uid ${recorded} was seeded`);
    return u;
  }

  private remap(o: unknown): unknown {
    let text = JSON.stringify(o);
    for (const [from, to] of this.uidMap) text = text.replaceAll(from, to);
    return JSON.parse(text);
  }

  /** The objects of a kind in a namespace, as stored (for assertions). */
  async objects<T extends KubeObject>(rk: ResourceKind, namespace: string): Promise<T[]> {
    return (await this.store.list<T>(rk, { namespace })).items;
  }

  /** The writes received (method and path), reads and discovery left out. */
  writeLog(): string[] {
    return this.requests
      .filter((r) => r.method !== "GET")
      .map((r) => `${r.method} ${r.path}${r.query.get("dryRun") ? " (dry run)" : ""}`);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://fake");
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const text = Buffer.concat(chunks).toString("utf8");
    const received: Received = {
      method: req.method ?? "GET",
      path: url.pathname,
      query: url.searchParams,
      body: text ? (JSON.parse(text) as unknown) : undefined,
    };
    this.requests.push(received);
    const send = (code: number, body: unknown, warnings: readonly string[] = []) => {
      const headers: Record<string, string | string[]> = {
        "content-type": "application/json",
        date: this.date().toUTCString(),
      };
      if (warnings.length > 0) headers.warning = warnings.map((w) => `299 - ${JSON.stringify(w)}`);
      res.writeHead(code, headers);
      res.end(JSON.stringify(body));
    };
    try {
      if (received.method === "GET" && url.pathname in this.discovery) {
        send(200, this.discovery[url.pathname]);
        return;
      }
      const denied = this.deny?.(received);
      if (denied) throw denied;
      if (received.method === "GET" && url.pathname === "/version") {
        send(200, this.version);
        return;
      }
      const isWrite = received.method !== "GET" && url.searchParams.get("dryRun") !== "All";
      if (isWrite && this.dropWrite !== undefined && this.writes + 1 >= this.dropWrite) {
        this.writes++;
        req.socket.destroy();
        return;
      }
      const { code, body, warnings } = await this.serve(received);
      if (isWrite) {
        this.writes++;
        await this.afterWrite?.(received);
      }
      send(code, body, warnings);
    } catch (e) {
      if (e instanceof APIError) send(e.code, statusBody(e));
      else send(500, statusBody(new APIError(500, "InternalError", e instanceof Error ? e.message : String(e))));
    }
  }

  private async serve(r: Received): Promise<{ code: number; body: unknown; warnings?: readonly string[] }> {
    const m = /^\/apis?\/(?:([^/]+)\/)?(v[^/]+)(?:\/namespaces\/([^/]+))?\/([^/]+)(?:\/([^/]+))?(?:\/([^/]+))?$/.exec(
      r.path,
    );
    const [, group = "", version = "", namespace, plural = "", name, subresource] = m ?? [];
    const gv = group ? `${group}/${version}` : version;
    const served = this.served.get(resourceName({ group, plural } as ResourceKind));
    if (!m || !served || !served.versions.has(gv) || (subresource !== undefined && subresource !== "status")) {
      return { code: 404, body: this.notFound };
    }
    const rk = served.rk;
    const as = (o: KubeObject): KubeObject => ({ ...o, apiVersion: gv, kind: rk.kind });
    const dryRun = r.query.get("dryRun") === "All";
    if (!name) {
      if (r.method === "GET") {
        const all = await this.store.list(rk, {
          ...(namespace ? { namespace } : {}),
          ...(r.query.get("labelSelector") ? { labelSelector: r.query.get("labelSelector")! } : {}),
        });
        const from = Number(r.query.get("continue") ?? "0");
        const limit = Number(r.query.get("limit") ?? "0") || all.items.length;
        const page = all.items.slice(from, from + limit);
        const more = from + limit < all.items.length;
        return {
          code: 200,
          body: {
            kind: `${rk.kind}List`,
            apiVersion: gv,
            metadata: {
              resourceVersion: all.metadata.resourceVersion,
              ...(more ? { continue: String(from + limit) } : {}),
            },
            // The apiserver leaves kind and apiVersion off list items.
            items: page.map(({ kind: _k, apiVersion: _a, ...rest }) => rest),
          },
        };
      }
      if (r.method === "POST") {
        const obj = r.body as KubeObject;
        const meta = obj.metadata ?? {};
        if (meta.namespace && meta.namespace !== namespace) {
          throw new APIError(
            400,
            "BadRequest",
            "the namespace of the provided object does not match the namespace sent on the request",
          );
        }
        const admitted = await this.admit(
          rk,
          "CREATE",
          { ...obj, metadata: { ...meta, namespace } },
          undefined,
          dryRun,
        );
        const made = await this.store.create(rk, admitted.object, { dryRun });
        return { code: 201, body: as(made), warnings: admitted.warnings };
      }
    } else {
      const cur = await this.store.get(rk, namespace, name);
      if (r.method === "GET") return { code: 200, body: as(cur) };
      if (r.method === "PATCH") {
        const patched = this.applyPatch(cur, r);
        if (subresource === "status") {
          const next = await this.store.updateStatus(rk, { ...cur, status: (patched as Obj).status } as KubeObject, {
            dryRun,
          });
          return { code: 200, body: as(next) };
        }
        const admitted = await this.admit(rk, "UPDATE", patched as KubeObject, cur, dryRun);
        const next = await this.store.update(rk, admitted.object, { dryRun });
        return { code: 200, body: as(next), warnings: admitted.warnings };
      }
      if (r.method === "DELETE") {
        const options = (r.body ?? {}) as { propagationPolicy?: "Orphan"; preconditions?: { uid?: string } };
        await this.store.delete(rk, namespace, name, {
          ...(options.preconditions ? { preconditions: options.preconditions } : {}),
        });
        if (options.propagationPolicy === "Orphan") await this.orphanDependents(namespace, cur.metadata!.uid!);
        return {
          code: 200,
          body: { kind: "Status", apiVersion: "v1", metadata: {}, status: "Success", details: { name } },
        };
      }
    }
    throw new APIError(405, "MethodNotAllowed", `${r.method} is not supported by the fake on ${r.path}`);
  }

  private applyPatch(cur: KubeObject, r: Received): unknown {
    const ops = r.body;
    if (Array.isArray(ops)) return jsonPatch(cur, ops as JSONPatchOperation[]);
    if (!isObj(ops)) throw new APIError(400, "BadRequest", "the patch is not a JSON object or array");
    return jsonMergePatch(cur, ops);
  }

  /** Our CronJobs go through our webhooks, as the webhook configuration routes them; other kinds as they are. */
  private async admit(
    rk: ResourceKind,
    operation: "CREATE" | "UPDATE",
    object: KubeObject,
    oldObject: KubeObject | undefined,
    dryRun: boolean,
  ): Promise<{ object: KubeObject; warnings: string[] }> {
    if (resourceName(rk) !== resourceName(CronJobResource)) return { object, warnings: [] };
    const request = (obj: unknown): AdmissionRequest => ({
      uid: "fake",
      kind: { group: GROUP, version: rk.version, kind: rk.kind },
      resource: { group: GROUP, version: rk.version, resource: rk.plural },
      name: object.metadata?.name ?? "",
      namespace: object.metadata?.namespace ?? "",
      operation,
      userInfo: { username: "tester" },
      object: obj,
      ...(oldObject ? { oldObject } : {}),
      dryRun,
    });
    const mutated = await mutateCronJob(request(object));
    const ops = mutated.patch
      ? (JSON.parse(Buffer.from(mutated.patch, "base64").toString("utf8")) as JSONPatchOperation[])
      : [];
    const obj = jsonPatch(object, ops) as KubeObject;
    const verdict = await validateCronJobRequest(request(obj));
    if (!verdict.allowed) throw webhookDenial(verdict);
    return { object: obj, warnings: [...(mutated.warnings ?? []), ...(verdict.warnings ?? [])] };
  }

  /** The garbage collector's part of an orphaning delete: dependents lose their owner reference to `uid`. */
  private async orphanDependents(namespace: string | undefined, uid: string): Promise<void> {
    for (const job of await this.objects(Kinds.Job, namespace ?? "")) {
      const refs = job.metadata?.ownerReferences ?? [];
      if (!refs.some((ref) => ref.uid === uid)) continue;
      const remaining = refs.filter((ref) => ref.uid !== uid);
      const next = structuredClone(job);
      if (remaining.length > 0) next.metadata!.ownerReferences = remaining;
      else delete next.metadata!.ownerReferences;
      await this.store.update(Kinds.Job, next);
    }
  }
}
