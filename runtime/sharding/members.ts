// The live replicas of a sharded install: the Leases its replicas hold, one each, in the install's namespace. A
// Lease is live while our monotonic clock says less than its duration has passed since we saw its record change
// (as leader election trusts a holder: remote timestamps never decide expiry, clocks of machines disagree).
// One exception, for the hash only (live()): a Lease we have seen once and never change, whose own renewTime says it
// expired, is not counted. A replica that joins within a Lease's duration of another's death would otherwise count
// the dead one for its first 15 s while the others no longer do, and the namespaces the two views give to different
// replicas would have no holder meanwhile. Counting a live replica out by a wrong clock only delays this one's view
// until that replica's next renewal (a retry period); who may take a claim (isLive) never reads a remote clock.
import { performance } from "node:perf_hooks";
import type { Client } from "../client.ts";
import { Informer } from "../cache/informer.ts";
import { Kinds } from "../kinds.ts";
import type { Logger } from "../log.ts";
import type { Lease } from "./claims.ts";

interface Seen {
  key: string;
  at: number;
  /** Seen to change since we first saw it (else all we know of it is its first record). */
  changed: boolean;
  /** Its record's own expiry by the wall clock (renewTime + duration), for the first record only. */
  wallExpiry: number | undefined;
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
    const before = this.seen.get(name);
    if (before?.key === key) return;
    const renewed = Date.parse(spec.renewTime ?? spec.acquireTime ?? "");
    this.seen.set(name, {
      key,
      at: performance.now(),
      changed: before !== undefined,
      wallExpiry: Number.isNaN(renewed) ? undefined : renewed + (spec.leaseDurationSeconds ?? 0) * 1000,
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

  /**
   * The live replicas' Lease names, sorted (each one's key in the hash): live by isLive, but for a Lease seen once and
   * never since whose own record says it expired (a dead replica's, seen first by a replica that started after).
   */
  live(now = performance.now(), wallNow = Date.now()): string[] {
    return [...this.seen.entries()]
      .filter(([n, s]) => this.isLive(n, now) && (s.changed || s.wallExpiry === undefined || s.wallExpiry > wallNow))
      .map(([n]) => n)
      .sort();
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
