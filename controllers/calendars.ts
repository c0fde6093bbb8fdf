// Exclusion calendars as the reconciler reads them: a CronJob's exclusions are its own windows
// (spec.exclusions.windows) and the windows of the ExclusionCalendars it names (spec.exclusions.calendars), read
// from the informer cache. A calendar that does not exist or does not parse makes the CronJob's exclusions unknown:
// its slots are then held, never run in silence over a freeze nobody can read (step 7, cronjob_controller.ts). Parsed
// exclusions are kept by what they are parsed from (the windows as stored, each calendar's resourceVersion), so a
// pass costs a key and a lookup.
import {
  CALENDAR_NAME_PATTERN,
  CronJobResource,
  type CronJobSchedules,
  ExclusionCalendarResource,
  MAX_CALENDARS,
} from "../api/v1/index.ts";
import {
  type CompiledWindow,
  type ExclusionSource,
  Exclusions,
  parseExclusionWindows,
} from "../api/v1/schedule/index.ts";
import type { CacheIndexer, CacheReader } from "../runtime/interfaces.ts";
import type { MapFunc } from "../runtime/controller.ts";

const CRONJOB_CALENDAR_INDEX = "spec.exclusions.calendars";

const key = (namespace: string, name: string) => `${namespace}/${name}`;

/** The calendars a stored CronJob names, as stored (bounded; a bad entry is reported by exclusionsOf). */
function calendarNames(spec: unknown): unknown[] {
  const ex = (spec as { exclusions?: { calendars?: unknown } } | undefined)?.exclusions;
  return Array.isArray(ex?.calendars) ? ex.calendars.slice(0, MAX_CALENDARS + 1) : [];
}

/** The index that finds a calendar's CronJobs (a calendar's change wakes them). */
export function setupCalendarCache(cache: CacheIndexer): void {
  cache.indexField(CronJobResource, CRONJOB_CALENDAR_INDEX, (cj) =>
    calendarNames((cj as { spec?: unknown }).spec)
      .filter((n): n is string => typeof n === "string")
      .map((n) => key(cj.metadata?.namespace ?? "", n)),
  );
}

/** What a CronJob's exclusions are this pass. */
export type CronJobExclusions =
  /** None named or given. */
  | { kind: "none" }
  | { kind: "ok"; exclusions: Exclusions; key: string }
  /** Unknown: a calendar missing or bad, or its own windows bad (`problem` says which and why). */
  | { kind: "unknown"; problem: string; calendar?: string };

export class CalendarBooks {
  readonly #cache: CacheReader;
  /** Parsed exclusions by what they came from; bounded. */
  readonly #parsed = new Map<string, Exclusions>();
  /** Schedules with exclusions applied, per parsed schedules and exclusions key. */
  readonly #excluding = new WeakMap<CronJobSchedules, Map<string, CronJobSchedules>>();

  constructor(cache: CacheReader) {
    this.#cache = cache;
  }

  /** The CronJob's exclusions, from its spec and the calendars in the cache. */
  exclusionsOf(cronJob: { metadata: { namespace?: string | undefined }; spec: unknown }): CronJobExclusions {
    const ex = (cronJob.spec as { exclusions?: { windows?: unknown } } | undefined)?.exclusions;
    const names = calendarNames(cronJob.spec);
    if (!ex || (names.length === 0 && (ex.windows === undefined || (Array.isArray(ex.windows) && !ex.windows.length))))
      return { kind: "none" };
    const namespace = cronJob.metadata.namespace ?? "";
    const parts: { by: string; raw: unknown; path: string; version: string }[] = [];
    if (ex.windows !== undefined)
      parts.push({ by: "spec.exclusions", raw: ex.windows, path: "spec.exclusions.windows", version: "" });
    for (const name of names) {
      if (typeof name !== "string" || !CALENDAR_NAME_PATTERN.test(name))
        return {
          kind: "unknown",
          problem: `spec.exclusions.calendars: ${JSON.stringify(name)} is not a calendar name`,
        };
      const stored = this.#cache.get(ExclusionCalendarResource, namespace, name) as
        { metadata?: { resourceVersion?: string }; spec?: { windows?: unknown } } | undefined;
      if (!stored)
        return {
          kind: "unknown",
          calendar: name,
          problem: `spec.exclusions.calendars names ${name}, which is not an ExclusionCalendar of namespace ${namespace}: slots are held until it exists`,
        };
      parts.push({
        by: `calendar ${name}`,
        raw: stored.spec?.windows ?? [],
        path: `ExclusionCalendar ${name}: spec.windows`,
        version: stored.metadata?.resourceVersion ?? "",
      });
    }
    const k = parts.map((p) => (p.version ? `${p.by}@${p.version}` : `${p.by}=${JSON.stringify(p.raw)}`)).join("\n");
    const known = this.#parsed.get(k);
    if (known) return { kind: "ok", exclusions: known, key: k };
    const sources: ExclusionSource[] = [];
    for (const p of parts) {
      const r = parseExclusionWindows(p.raw, p.path);
      if (!r.ok) {
        const calendar = p.by.startsWith("calendar ") ? p.by.slice("calendar ".length) : undefined;
        return {
          kind: "unknown",
          ...(calendar ? { calendar } : {}),
          problem: `${r.errors[0]?.message ?? `${p.path}: invalid`}: slots are held until it is fixed`,
        };
      }
      sources.push({ by: p.by, windows: r.windows as readonly CompiledWindow[] });
    }
    const exclusions = new Exclusions(sources);
    if (this.#parsed.size >= 4096) this.#parsed.clear();
    this.#parsed.set(k, exclusions);
    return { kind: "ok", exclusions, key: k };
  }

  /** The CronJob's schedules with its exclusions applied (kept per parsed schedules and exclusions). */
  excluding(schedules: CronJobSchedules, ex: { exclusions: Exclusions; key: string }): CronJobSchedules {
    let byKey = this.#excluding.get(schedules);
    if (!byKey) this.#excluding.set(schedules, (byKey = new Map()));
    let s = byKey.get(ex.key);
    if (!s) {
      if (byKey.size >= 16) byKey.clear();
      byKey.set(ex.key, (s = schedules.excluding(ex.exclusions)));
    }
    return s;
  }

  /** A calendar created, changed or deleted: the CronJobs naming it decide again. */
  calendarEvents(): MapFunc {
    return (obj) => {
      const ns = obj.metadata?.namespace ?? "";
      return this.#cache
        .byIndex(CronJobResource, CRONJOB_CALENDAR_INDEX, key(ns, obj.metadata?.name ?? ""))
        .map((cj) => ({ namespace: ns, name: cj.metadata?.name ?? "" }));
    };
  }
}
