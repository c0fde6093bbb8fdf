// Exclusion calendars as the reconciler reads them: a CronJob's exclusions are its own windows
// (spec.exclusions.windows) and the windows of the ExclusionCalendars it names (spec.exclusions.calendars), read
// from the informer cache. A calendar that does not exist or does not parse makes the CronJob's exclusions unknown:
// its slots are then held, never run in silence over a freeze nobody can read (step 7, cronjob_controller.ts). Parsed
// exclusions are kept by what they are parsed from (the windows as stored, each calendar's resourceVersion), so a
// pass costs a key and a lookup.
import {
  CALENDAR_NAME_PATTERN,
  type CalendarRead,
  calendarNamesOf,
  CronJobResource,
  type CronJobSchedules,
  ExclusionCalendarResource,
  exclusionsOf,
} from "../api/v1/index.ts";
import type { Exclusions } from "../api/v1/schedule/index.ts";
import type { CacheIndexer, CacheReader } from "../runtime/interfaces.ts";
import type { MapFunc } from "../runtime/controller.ts";
import { calendarCheck } from "../webhooks/exclusion_checks.ts";
import type { AdmissionCheck } from "../webhooks/admission_check.ts";
import type { Input, InputCronJob, InputRead, InputReader, InputWatch } from "./input.ts";

const CRONJOB_CALENDAR_INDEX = "spec.exclusions.calendars";

const key = (namespace: string, name: string) => `${namespace}/${name}`;

/** The index that finds a calendar's CronJobs (a calendar's change wakes them). */
function setupCalendarCache(cache: CacheIndexer): void {
  cache.indexField(CronJobResource, CRONJOB_CALENDAR_INDEX, (cj) =>
    calendarNamesOf((cj as { spec?: unknown }).spec)
      .filter((n) => n !== "")
      .map((n) => key(cj.metadata?.namespace ?? "", n)),
  );
}

/** What a CronJob's exclusions are this pass. */
export type CronJobExclusions =
  /** None named or given. */
  | { kind: "none" }
  | { kind: "ok"; exclusions: Exclusions; key: string }
  /** Unknown: a calendar missing or bad, or its own windows bad (`problem` says which and why). */
  | { kind: "unknown"; problem: string; calendar?: string; missing: boolean };

/** A pass's read of the exclusions: what they are, and the schedules skipping them (compiled once, kept). */
interface ExclusionsRead {
  readonly exclusions: CronJobExclusions;
  /** The schedules as written, skipping the exclusions when they are known ("ok"); as written otherwise. */
  readonly excluding: (written: CronJobSchedules) => CronJobSchedules;
}

/** A CronJob's exclusions as read from the cache's ExclusionCalendars, compiled once per calendar version. */
class CalendarReader implements InputReader<ExclusionsRead> {
  readonly #cache: CacheReader;
  /** Compiled exclusions by what they came from (the windows, each calendar's resourceVersion); bounded. */
  readonly #parsed = new Map<string, CronJobExclusions>();
  /** Schedules with exclusions applied, per parsed schedules and exclusions key. */
  readonly #excluding = new WeakMap<CronJobSchedules, Map<string, CronJobSchedules>>();

  constructor(cache: CacheReader) {
    this.#cache = cache;
  }

  /**
   * The CronJob's exclusions this pass, and its problem for Degraded: a calendar missing or bad (or its own windows
   * bad) holds its slots until it can be read.
   */
  read(cronJob: InputCronJob): InputRead<ExclusionsRead> {
    const exclusions = this.exclusionsOf(cronJob);
    const excluding = (written: CronJobSchedules) =>
      exclusions.kind === "ok" ? this.excluding(written, exclusions) : written;
    if (exclusions.kind !== "unknown") return { value: { exclusions, excluding } };
    return { value: { exclusions, excluding }, problem: { reason: "CalendarNotFound", message: exclusions.problem } };
  }

  /** A calendar created, changed or deleted: the CronJobs naming it decide again. */
  watches(): InputWatch[] {
    return [{ kind: ExclusionCalendarResource, map: this.calendarEvents() }];
  }

  /** At admission, a CronJob's calendars read as here: warned about when missing, bad, or leaving no slot. */
  admission(covers: (namespace: string) => boolean): AdmissionCheck {
    return calendarCheck((namespace, name) => (covers(namespace) ? this.calendar(namespace, name) : "unknown"));
  }

  /** A calendar as the cache has it (the admission webhook reads calendars the same way). */
  private calendar(namespace: string, name: string): CalendarRead {
    const stored = CALENDAR_NAME_PATTERN.test(name)
      ? (this.#cache.get(ExclusionCalendarResource, namespace, name) as
          { metadata?: { resourceVersion?: string }; spec?: { windows?: unknown } } | undefined)
      : undefined;
    return stored
      ? { name, state: "found", windows: stored.spec?.windows ?? [], version: stored.metadata?.resourceVersion }
      : { name, state: "missing" };
  }

  /**
   * The CronJob's exclusions, from its spec and the calendars in the cache, by the API's rule
   * (api/v1/exclusionsview.ts, which `kubectl cron` applies too); kept by what they are compiled from.
   */
  exclusionsOf(cronJob: { metadata: { namespace?: string | undefined }; spec: unknown }): CronJobExclusions {
    // Windows stored in any shape are compiled (one that is no list holds the slots, as a window that does not parse).
    const own = (cronJob.spec as { exclusions?: { windows?: unknown } } | undefined)?.exclusions?.windows;
    if (own === undefined && !calendarNamesOf(cronJob.spec).length) return { kind: "none" };
    const namespace = cronJob.metadata.namespace ?? "";
    const reads = calendarNamesOf(cronJob.spec).map((name) => this.calendar(namespace, name));
    const k = [
      JSON.stringify(own ?? null),
      ...reads.map((r) => (r.state === "found" ? `${r.name}@${r.version}` : `${r.name}!`)),
    ].join("\n");
    const known = this.#parsed.get(k);
    if (known) return known;
    const view = exclusionsOf({ metadata: { namespace }, spec: cronJob.spec }, reads);
    const out: CronJobExclusions = view.hold
      ? {
          kind: "unknown",
          problem: view.hold.problem,
          ...(view.hold.calendar ? { calendar: view.hold.calendar } : {}),
          missing: view.hold.missing,
        }
      : view.exclusions
        ? { kind: "ok", exclusions: view.exclusions, key: k }
        : { kind: "none" };
    // The key names each calendar's version, or that it is missing: a calendar created or changed is a new key.
    if (this.#parsed.size >= 4096) this.#parsed.clear();
    this.#parsed.set(k, out);
    return out;
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

  private calendarEvents(): MapFunc {
    return (obj) => {
      const ns = obj.metadata?.namespace ?? "";
      return this.#cache
        .byIndex(CronJobResource, CRONJOB_CALENDAR_INDEX, key(ns, obj.metadata?.name ?? ""))
        .map((cj) => ({ namespace: ns, name: cj.metadata?.name ?? "" }));
    };
  }
}

/** The exclusion calendars a CronJob names, as an input (input.ts): their index, their compiled windows, their check. */
export const CALENDAR_INPUT: Input<ExclusionsRead, CalendarReader> = {
  field: "spec.exclusions.calendars",
  setupCache: setupCalendarCache,
  admissionKinds: [ExclusionCalendarResource],
  reader: (cache) => new CalendarReader(cache),
};
