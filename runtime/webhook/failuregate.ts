// Adds, beside each webhook a configuration ships with `failurePolicy: Ignore`, a twin that fails closed, once the
// Service port they call has a ready endpoint. A webhook a release adds reaches the cluster in the same apply as the
// Deployment that serves it (kubectl apply, Helm), seconds before any of its Pods is ready: with Fail from the start,
// every write of its kind is refused until then (no endpoint), or answered 404 by a replica of the release before
// (which the API server turns into a refusal). Shipped Ignore and called through a Service port whose targetPort is
// a name only the new Pods declare, it is never sent to an old replica; the first ready endpoint of that port brings
// its twin (`<name>-served`, the same webhook with Fail), for good: a pass never removes a twin whose webhook is
// still listed, and keeps it the webhook's copy (rules, path, caBundle) as a re-apply changes the webhook.
//
// Why a twin and not the webhook's own failurePolicy: the configuration is the installer's (Helm 4 and `kubectl apply
// --server-side` apply it server-side, Argo CD diffs it), and a field it sets that the operator changed is a conflict
// at every upgrade, or drift. A webhook it does not list is the operator's alone, as the caBundle is.
//
// Which webhooks: those the configuration names in `annotation` (comma-separated). Generic: the caller names the
// annotation, the configurations and the Service.
import { Backoff } from "../cache/backoff.ts";
import { Informer } from "../cache/informer.ts";
import { Kicker } from "./kicker.ts";
import { isConflict, isNotFound } from "../errors.ts";
import { type KubeObject, Kinds, type ResourceKind } from "../kinds.ts";
import type { Logger } from "../log.ts";
import type { Client } from "../client.ts";
import type { Runnable } from "../runnables.ts";

/** The label the EndpointSlice controller sets to the Service's name. */
const SERVICE_NAME_LABEL = "kubernetes.io/service-name";

interface FailureGateOptions {
  client: Client;
  /** The configurations, by kind (certprovisioner.ts' CertKinds: Validating/MutatingWebhookConfiguration) and name. */
  configurations: ReadonlyArray<{ kind: ResourceKind; name: string }>;
  /** The annotation on a configuration that lists the webhooks to turn to Fail once served. */
  annotation: string;
  /** The Service the webhooks call (its EndpointSlices are watched). */
  serviceName: string;
  serviceNamespace: string;
  logger: Logger;
  /** A pass at least this often, in case a watch missed something (default 5 min). */
  resyncIntervalMs?: number;
}

interface Webhook {
  name: string;
  failurePolicy?: string;
  clientConfig?: { service?: { name?: string; namespace?: string; port?: number }; caBundle?: string };
}
interface Configuration extends KubeObject {
  webhooks?: Webhook[];
}
interface ServicePort {
  name?: string;
  port: number;
}
interface Service extends KubeObject {
  spec?: { ports?: ServicePort[] };
}
export interface EndpointSlice extends KubeObject {
  ports?: Array<{ name?: string }> | null;
  endpoints?: Array<{ conditions?: { ready?: boolean | null } }> | null;
}

/** The name of the webhook's twin: `-served` after its first label (`vgroup-v1.kb.io` → `vgroup-v1-served.kb.io`). */
export function servedTwinName(name: string): string {
  const dot = name.indexOf(".");
  return dot < 0 ? `${name}-served` : `${name.slice(0, dot)}-served${name.slice(dot)}`;
}

/** The webhooks `annotation` lists that call the Service `service`. */
export function gatedWebhooks(
  cfg: Configuration,
  annotation: string,
  service: { name: string; namespace: string },
): Webhook[] {
  const listed = new Set(
    (cfg.metadata?.annotations?.[annotation] ?? "")
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean),
  );
  return (cfg.webhooks ?? []).filter(
    (w) =>
      listed.has(w.name) &&
      w.clientConfig?.service?.name === service.name &&
      w.clientConfig.service.namespace === service.namespace,
  );
}

/**
 * The configuration's webhooks with the twins they should have (pure): beside each gated webhook whose port is
 * `served`, or that has a twin already, its twin (a copy with Fail, keeping the twin's caBundle when it has one);
 * a twin whose webhook is no longer gated goes. Undefined when nothing changes.
 */
export function withTwins(
  webhooks: readonly Webhook[],
  gated: readonly Webhook[],
  served: (w: Webhook) => boolean,
): Webhook[] | undefined {
  const byName = new Map(webhooks.map((w) => [w.name, w]));
  const gatedNames = new Set(gated.map((w) => w.name));
  const out: Webhook[] = [];
  for (const w of webhooks) {
    // A twin is placed right after its webhook (below); one whose webhook is gone or no longer gated is dropped.
    if (isTwin(w)) continue;
    out.push(w);
    if (!gatedNames.has(w.name)) continue;
    const current = byName.get(servedTwinName(w.name));
    if (!current && !served(w)) continue;
    const caBundle = current?.clientConfig?.caBundle ?? w.clientConfig?.caBundle;
    out.push({
      ...w,
      name: servedTwinName(w.name),
      failurePolicy: "Fail",
      clientConfig: { ...w.clientConfig, ...(caBundle !== undefined ? { caBundle } : {}) },
    });
  }
  return JSON.stringify(out) === JSON.stringify(webhooks) ? undefined : out;
}

/** A webhook named as a twin (`-served` ending its first label): the gate's own. */
function isTwin(w: Webhook): boolean {
  return /^[^.]*-served(\.|$)/.test(w.name);
}

/** The name EndpointSlices give the Service's port `port` (443 when a webhook names none). */
export function portNameOf(svc: Service, port: number | undefined): string | undefined {
  const p = (svc.spec?.ports ?? []).find((sp) => sp.port === (port ?? 443));
  return p ? (p.name ?? "") : undefined;
}

/** Whether any endpoint of `slices` is ready on the port named `portName` (a Pod without it is in no such slice). */
export function hasReadyEndpoint(slices: readonly EndpointSlice[], portName: string): boolean {
  return slices.some(
    (s) =>
      (s.ports ?? []).some((p) => (p.name ?? "") === portName) &&
      // Unset ready means ready (the EndpointSlice API's rule for consumers).
      (s.endpoints ?? []).some((e) => e.conditions?.ready !== false),
  );
}

export class WebhookFailureGate implements Runnable {
  readonly name = "webhook-failure-gate";
  readonly needLeaderElection = false;
  private readonly o: FailureGateOptions;
  private readonly log: Logger;
  private slices: Informer<EndpointSlice> | undefined;
  private readonly kicker = new Kicker();

  constructor(o: FailureGateOptions) {
    this.o = o;
    this.log = o.logger;
  }

  async start(signal: AbortSignal): Promise<void> {
    const kick = () => this.kicker.kick();
    const slices = new Informer<EndpointSlice>(this.o.client, Kinds.EndpointSlice, {
      namespace: this.o.serviceNamespace,
      labelSelector: `${SERVICE_NAME_LABEL}=${this.o.serviceName}`,
      logger: this.log.withName("watch"),
    });
    this.slices = slices;
    const configs = this.o.configurations.map(({ kind, name }) => {
      const inf = new Informer<KubeObject>(this.o.client, kind, {
        fieldSelector: `metadata.name=${name}`,
        logger: this.log.withName("watch"),
      });
      return inf;
    });
    for (const inf of [slices, ...configs]) {
      inf.addEventHandler({ onAdd: kick, onUpdate: kick, onDelete: kick });
      inf.start();
    }
    const resync = this.o.resyncIntervalMs ?? 5 * 60_000;
    // A lasting failure (RBAC taken away) is retried ever more slowly, not every two seconds.
    const backoff = new Backoff({ initialMs: 2_000, maxMs: 60_000 });
    try {
      while (!signal.aborted) {
        this.kicker.passStarts();
        let delay = resync;
        if (slices.hasSynced()) {
          try {
            await this.pass();
            backoff.reset();
          } catch (err) {
            delay = backoff.next();
            this.log.error("Cannot set the served webhooks' failure policy; retrying", err, {
              retryInMs: Math.round(delay),
            });
          }
        }
        // Until the EndpointSlices are listed (the informer retries with its own backoff), a look every second.
        // A change arrives as a burst of events (a rollout's slices): one pass a little after the first.
        await this.kicker.sleep(slices.hasSynced() ? delay : 1_000, 100, signal);
      }
    } finally {
      await Promise.all([slices, ...configs].map((i) => i.stop()));
    }
  }

  /** One pass: every gated webhook whose Service port has a ready endpoint gets its twin; returns the twins added. */
  async pass(): Promise<string[]> {
    const service = { name: this.o.serviceName, namespace: this.o.serviceNamespace };
    const slices = this.slices?.list() ?? [];
    const added: string[] = [];
    for (const { kind, name } of this.o.configurations) {
      let cfg: Configuration;
      try {
        cfg = await this.o.client.get<Configuration>(kind, undefined, name);
      } catch (err) {
        if (isNotFound(err)) continue;
        throw err;
      }
      const webhooks = cfg.webhooks ?? [];
      const gated = gatedWebhooks(cfg, this.o.annotation, service);
      const untwinned = gated.filter((w) => !webhooks.some((o) => o.name === servedTwinName(w.name)));
      const svc =
        untwinned.length > 0
          ? await this.o.client.get<Service>(Kinds.Service, service.namespace, service.name)
          : undefined;
      const served = (w: Webhook) => {
        const portName = svc ? portNameOf(svc, w.clientConfig?.service?.port) : undefined;
        return portName !== undefined && hasReadyEndpoint(slices, portName);
      };
      const next = withTwins(webhooks, gated, served);
      if (!next) continue;
      try {
        await this.o.client.update<Configuration>(kind, { ...cfg, webhooks: next });
      } catch (err) {
        // Another replica (or the CA injection) wrote it first: the watch brings the next pass.
        if (isConflict(err)) continue;
        throw err;
      }
      const names = next.filter((w) => !webhooks.some((o) => o.name === w.name)).map((w) => w.name);
      this.log.info("Webhooks now served: their twins fail closed", {
        configuration: `${kind.kind}/${name}`,
        added: names,
        removed: webhooks.filter((w) => !next.some((o) => o.name === w.name)).map((w) => w.name),
      });
      added.push(...names);
    }
    return added;
  }
}
