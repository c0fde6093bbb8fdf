// Setting a CA bundle where the apiserver reads it when it calls a webhook: clientConfig.caBundle of every webhook
// of the named Mutating/ValidatingWebhookConfigurations, and spec.conversion.webhook.clientConfig.caBundle of the
// named CustomResourceDefinitions whose conversion strategy is Webhook (one with strategy None is left alone).
// Each object is read, edited and replaced at the resourceVersion read; a Conflict or NotFound re-reads. None is
// ever created. certprovisioner.ts runs it on every pass.
import type { Client } from "../client.ts";
import { isConflict, isNotFound } from "../errors.ts";
import type { KubeObject, ResourceKind } from "../kinds.ts";
import type { KeyValues, Logger } from "../log.ts";

interface ClientConfig {
  caBundle?: string;
  [k: string]: unknown;
}

interface WebhookConfiguration extends KubeObject {
  webhooks?: Array<{ name?: string; clientConfig?: ClientConfig; [k: string]: unknown }>;
}

interface CustomResourceDefinition extends KubeObject {
  spec?: {
    conversion?: {
      /** "None" when unset. */
      strategy?: string;
      webhook?: { clientConfig?: ClientConfig; [k: string]: unknown };
      [k: string]: unknown;
    };
    [k: string]: unknown;
  };
}

/** One object whose caBundle a pass sets; every kind follows the same read-check-write discipline. */
interface InjectionTarget<T extends KubeObject> {
  /** "Kind/name", in logs and results. */
  id: string;
  /** The key `id` is logged under. */
  logKey: string;
  /** What the object is, as log messages start ("Webhook configuration"). */
  what: string;
  /** Where the bundle goes, as log messages end ("the webhook configuration"). */
  into: string;
  read(): Promise<T>;
  /**
   * The object with the caBundle set and what that changed (for the log); "current" when it already has
   * it; or why the object is not to be touched.
   */
  edit(obj: T): { updated: T; changed: KeyValues } | "current" | { skip: string };
  /** An update at the resourceVersion read. */
  write(obj: T): Promise<unknown>;
}

/** What one pass of setting the bundle did, by object ("Kind/name"). */
interface InjectionResult {
  /** Objects whose caBundle this pass set. */
  injected: string[];
  /** Named objects that do not exist (yet). */
  missing: string[];
  /** Named CRDs left alone because their conversion strategy is not Webhook. */
  skipped: string[];
  errors: Error[];
}

/** A named object of a kind that holds a caBundle. */
export interface NamedObject {
  kind: ResourceKind;
  name: string;
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * Sets the CA bundle in webhook configurations and CRDs. Kept across passes: it logs a missing or skipped
 * object once until that changes, not on every pass.
 */
export class CABundleInjector {
  private readonly client: Client;
  private readonly log: Logger;
  /** How many times it re-reads an object that changed under it before giving up until the next pass. */
  private readonly maxAttempts: number;
  private missingLogged = new Set<string>();
  private skippedLogged = new Set<string>();

  constructor(o: { client: Client; logger: Logger; maxAttempts: number }) {
    this.client = o.client;
    this.log = o.logger;
    this.maxAttempts = o.maxAttempts;
  }

  /** Sets `bundle` (PEM text) in every named configuration and CRD; an object that failed is in `errors`. */
  async inject(
    bundle: string,
    configurations: readonly NamedObject[],
    crds: readonly NamedObject[],
  ): Promise<InjectionResult> {
    const caBundle = Buffer.from(bundle).toString("base64");
    const result: InjectionResult = { injected: [], missing: [], skipped: [], errors: [] };
    for (const { kind, name } of configurations) {
      await this.injectInto(result, {
        id: `${kind.kind}/${name}`,
        logKey: "configuration",
        what: "Webhook configuration",
        into: "the webhook configuration",
        read: () => this.client.get<WebhookConfiguration>(kind, undefined, name),
        edit: (cfg) => {
          const webhooks = cfg.webhooks ?? [];
          const stale = webhooks.filter((w) => w.clientConfig?.caBundle !== caBundle).map((w) => w.name);
          if (stale.length === 0) return "current";
          return {
            updated: {
              ...cfg,
              webhooks: webhooks.map((w) => ({ ...w, clientConfig: { ...w.clientConfig, caBundle } })),
            },
            changed: { webhooks: stale },
          };
        },
        write: (cfg) => this.client.update<WebhookConfiguration>(kind, cfg),
      });
    }
    for (const { kind, name } of crds) {
      await this.injectInto(result, {
        id: `${kind.kind}/${name}`,
        logKey: "customResourceDefinition",
        what: "CustomResourceDefinition",
        into: "the CustomResourceDefinition's conversion webhook",
        read: () => this.client.get<CustomResourceDefinition>(kind, undefined, name),
        edit: (crd) => {
          const conversion = crd.spec?.conversion;
          const strategy = conversion?.strategy ?? "None";
          if (!conversion || strategy !== "Webhook") {
            return { skip: `its conversion strategy is ${strategy}, not Webhook` };
          }
          const webhook = conversion.webhook ?? {};
          if (webhook.clientConfig?.caBundle === caBundle) return "current";
          return {
            updated: {
              ...crd,
              spec: {
                ...crd.spec,
                conversion: {
                  ...conversion,
                  webhook: { ...webhook, clientConfig: { ...webhook.clientConfig, caBundle } },
                },
              },
            },
            changed: {},
          };
        },
        write: (crd) => this.client.update<CustomResourceDefinition>(kind, crd),
      });
    }
    return result;
  }

  /**
   * Sets one object's caBundle: reads it, and unless it is missing, already current or not to be touched,
   * replaces it at the resourceVersion read (a Conflict or NotFound re-reads, up to maxAttempts times).
   * A missing or skipped object is logged once until that changes.
   */
  private async injectInto<T extends KubeObject>(result: InjectionResult, t: InjectionTarget<T>): Promise<void> {
    const { id } = t;
    try {
      for (let attempt = 1; ; attempt++) {
        let obj: T;
        try {
          obj = await t.read();
        } catch (err) {
          if (!isNotFound(err)) throw err;
          result.missing.push(id);
          if (!this.missingLogged.has(id)) {
            this.log.info(`${t.what} not found; its CA bundle is set once it exists`, { [t.logKey]: id });
            this.missingLogged.add(id);
          }
          return;
        }
        this.missingLogged.delete(id);
        const edit = t.edit(obj);
        if (edit === "current") {
          this.skippedLogged.delete(id);
          return;
        }
        if ("skip" in edit) {
          result.skipped.push(id);
          if (!this.skippedLogged.has(id)) {
            this.log.info(`${t.what} left alone: ${edit.skip}`, { [t.logKey]: id });
            this.skippedLogged.add(id);
          }
          return;
        }
        this.skippedLogged.delete(id);
        if (attempt > this.maxAttempts) {
          throw new Error(`${id} changed under every one of ${this.maxAttempts} attempts`);
        }
        try {
          await t.write(edit.updated);
        } catch (err) {
          if (isConflict(err) || isNotFound(err)) continue;
          throw err;
        }
        result.injected.push(id);
        this.log.info(`Injected the CA bundle into ${t.into}`, { [t.logKey]: id, ...edit.changed });
        return;
      }
    } catch (err) {
      result.errors.push(new Error(`cannot set the CA bundle of ${id}: ${messageOf(err)}`, { cause: err }));
    }
  }
}
