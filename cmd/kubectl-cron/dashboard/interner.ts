// Short strings shared across the objects the dashboard's informers hold: each parsed object has its own copy of its
// apiVersion, kind, namespace, owner's name, conditions' words and record's decisions (of 5,000 CronJobs and 3,333
// Jobs, ~30,000 copies of a few hundred strings). The table lives for the initial lists; afterwards it stays small.

/** The longest string interned: names, namespaces, words and times, not messages. */
const INTERNED_LENGTH = 64;
/** Strings kept during the initial lists, and after them (watch events). */
const INTERNED_MAX = 50_000;
const INTERNED_AFTER_SYNC = 2_000;

export class Interner {
  private strings = new Map<string, string>();
  private max = INTERNED_MAX;

  /** `o` (changed in place) with its short strings replaced by the copies already seen. */
  intern<T>(o: T): T {
    const seen = this.strings;
    const walk = (v: unknown): unknown => {
      if (typeof v === "string") {
        if (v.length > INTERNED_LENGTH) return v;
        const known = seen.get(v);
        if (known !== undefined) return known;
        if (seen.size < this.max) seen.set(v, v);
        return v;
      }
      // An object already stored (frozen) is already interned.
      if (!v || typeof v !== "object" || Object.isFrozen(v)) return v;
      if (Array.isArray(v)) {
        for (let i = 0; i < v.length; i++) v[i] = walk(v[i]);
      } else {
        const r = v as Record<string, unknown>;
        for (const k in r) r[k] = walk(r[k]);
      }
      return v;
    };
    return walk(o) as T;
  }

  /** The initial lists are in: the table they filled is dropped, and the next stays small (INTERNED_AFTER_SYNC). */
  synced(): void {
    this.strings = new Map();
    this.max = INTERNED_AFTER_SYNC;
  }
}
