// The live replicas of a sharded install: the Leases its replicas hold, one each, in the install's namespace. A
// Lease is live while our monotonic clock says less than its duration has passed since we saw its record change
// (as leader election trusts a holder: remote timestamps never decide expiry, clocks of machines disagree).
import { performance } from "node:perf_hooks";
import type { Client } from "../client.ts";
import { Informer } from "../cache/informer.ts";
import { Kinds } from "../kinds.ts";
import type { Logger } from "../log.ts";
import type { Lease } from "./claims.ts";

interface Seen {
  key: string;
  at: number;
  durationMs: number;
  holder: string;
  uid: string;
  resourceVersion: string;
}

export class Members {
  private readonly informer: Informer<Lease>;
  private readonly seen = new Map<string, Seen>();
  private readonly namespace: string;

  constructor(o: { client: Client; namespace: string; labelSelector: string; logger?: Logger; onChange: () => void }) {
    this.namespace = o.namespace;
    this.informer = new Informer<Lease>(o.client, Kinds.Lease, {
      namespace: o.namespace,
      labelSelector: o.labelSelector,
      ...(o.logger ? { logger: o.logger } : {}),
    });
    this.informer.addEventHandler({
      onAdd: (l) => this.observe(l, o.onChange),
      onUpdate: (_, l) => this.observe(l, o.onChange),
      onDelete: (l) => {
        this.seen.delete(l.metadata?.name ?? "");
        o.onChange();
      },
    });
  }

  start(): void {
    this.informer.start();
  }

  stop(): Promise<void> {
    return this.informer.stop();
  }

  waitForSync(signal?: AbortSignal): Promise<boolean> {
    return this.informer.waitForSync(signal);
  }

  private observe(l: Lease, onChange: () => void): void {
    const name = l.metadata?.name ?? "";
    const spec = l.spec ?? {};
    const key = `${spec.holderIdentity ?? ""}|${spec.renewTime ?? ""}|${spec.leaseDurationSeconds ?? ""}`;
    if (this.seen.get(name)?.key === key) return;
    this.seen.set(name, {
      key,
      at: performance.now(),
      durationMs: (spec.leaseDurationSeconds ?? 0) * 1000,
      holder: spec.holderIdentity ?? "",
      uid: l.metadata?.uid ?? "",
      resourceVersion: l.metadata?.resourceVersion ?? "",
    });
    onChange();
  }

  /**
   * Leases we have seen unchanged for `quietMs` (a replica killed before it could delete its own): already not live,
   * so deleting them changes no decision. With their uid and resourceVersion, to delete only the record we judged.
   */
  stale(quietMs: number, now = performance.now()): Array<{ name: string; uid: string; resourceVersion: string }> {
    const out: Array<{ name: string; uid: string; resourceVersion: string }> = [];
    for (const [name, s] of this.seen)
      if (s.at + Math.max(quietMs, s.durationMs) <= now && s.uid && s.resourceVersion)
        out.push({ name, uid: s.uid, resourceVersion: s.resourceVersion });
    return out;
  }

  /** Whether the Lease `namespace/name` is held and has been renewed within its duration, as we observed. */
  isLive(ref: string, now = performance.now()): boolean {
    const [ns, name] = ref.includes("/") ? (ref.split("/", 2) as [string, string]) : [this.namespace, ref];
    if (ns !== this.namespace) return false;
    const s = this.seen.get(name);
    return !!s && s.holder !== "" && s.at + s.durationMs > now;
  }

  /** The live replicas' Lease names, sorted (each one's key in the hash). */
  live(now = performance.now()): string[] {
    return [...this.seen.keys()].filter((n) => this.isLive(n, now)).sort();
  }

  /** Monotonic time at which the next live Lease would expire unrenewed (when to look again). */
  nextExpiry(now = performance.now()): number | undefined {
    let next: number | undefined;
    for (const s of this.seen.values()) {
      const t = s.at + s.durationMs;
      if (s.holder && t > now && (next === undefined || t < next)) next = t;
    }
    return next;
  }
}
