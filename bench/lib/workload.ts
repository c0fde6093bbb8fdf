// The workload: N CronJobs `* * * * *` spread over a few namespaces, each with the same small Job
// template, in our kind (batch.tutorial.kubebuilder.io/v1) or the built-in one (batch/v1 from Kubernetes 1.21,
// batch/v1beta1 on 1.20), plus the raw Jobs of the calibration phase.
import { API_VERSION, KIND } from "../../api/v1/groupversion_info.ts";
import { ConcurrencyGroupResource, GROUP_KIND } from "../../api/v1/concurrencygroup_types.ts";
import {
  CALENDAR_KIND,
  type CronJobExclusions,
  type ExclusionCalendar,
  ExclusionCalendarResource,
} from "../../api/v1/exclusioncalendar_types.ts";
import { Exclusions } from "../../api/v1/schedule/excludingschedule.ts";
import { parseExclusionWindows } from "../../api/v1/schedule/exclusionwindows.ts";
import { smallJobSpec } from "../../envtest/small-job.ts";
import type { Client } from "../../runtime/client.ts";
import { isAlreadyExists } from "../../runtime/errors.ts";
import { Kinds, type KubeObject, type ResourceKind } from "../../runtime/kinds.ts";
import { forEachLimit } from "./pool.ts";

export const SCHEDULE = "* * * * *";
/** Keep one finished Job per CronJob: with a Job a minute, history cleanup deletes one every minute. */
export const HISTORY_LIMIT = 1;

/** The built-in CronJob's version on a cluster of `minor`: batch/v1 from 1.21 (v1beta1 was removed in 1.25). */
export function builtinCronJobKind(minor: number): ResourceKind {
  return {
    group: "batch",
    version: minor >= 21 ? "v1" : "v1beta1",
    kind: "CronJob",
    plural: "cronjobs",
    namespaced: true,
  };
}

export function namespaceName(i: number): string {
  return `bench-${i}`;
}

export function cronJobName(i: number): string {
  return `cj-${String(i).padStart(5, "0")}`;
}

/** Where CronJob i lives: round-robin over the namespaces. */
export function placement(i: number, namespaces: number): { namespace: string; name: string } {
  return { namespace: namespaceName(i % namespaces), name: cronJobName(i) };
}

/** What some of ours' CronJobs carry besides the common spec (--groups, --calendars; the built-in has neither). */
export interface OursExtras {
  /** spec.concurrencyGroup. */
  group?: string | undefined;
  /** spec.exclusions. */
  exclusions?: CronJobExclusions | undefined;
  /** spec.jitter (JITTER). */
  jitter?: string | undefined;
}

function cronJobSpec(name: string, extras: OursExtras = {}): Record<string, unknown> {
  return {
    schedule: SCHEDULE,
    ...(extras.group ? { concurrencyGroup: extras.group } : {}),
    ...(extras.exclusions ? { exclusions: extras.exclusions } : {}),
    ...(extras.jitter ? { jitter: extras.jitter } : {}),
    concurrencyPolicy: "Allow",
    successfulJobsHistoryLimit: HISTORY_LIMIT,
    failedJobsHistoryLimit: HISTORY_LIMIT,
    jobTemplate: { metadata: { labels: { app: "bench", cronjob: name } }, spec: smallJobSpec() },
  };
}

export function ourCronJob(namespace: string, name: string, extras?: OursExtras): KubeObject {
  return { apiVersion: API_VERSION, kind: KIND, metadata: { name, namespace }, spec: cronJobSpec(name, extras) };
}

/**
 * Which of `count` objects (groups, calendars) CronJob i names: object j lives in namespace j mod K, and the CronJobs
 * of a namespace take that namespace's objects round-robin. Undefined when the namespace has none.
 */
function spreadOver(i: number, namespaces: number, count: number): number | undefined {
  const ns = i % namespaces;
  const here = Math.floor((count - 1 - ns) / namespaces) + 1;
  if (here <= 0) return undefined;
  const t = Math.floor(i / 5 / namespaces) % here;
  return ns + namespaces * t;
}

/** With --groups G: a fifth of the CronJobs (every fifth) are in G concurrency groups, spread over the namespaces. */
export function groupName(j: number): string {
  return `group-${String(j).padStart(3, "0")}`;
}

/**
 * The group CronJob i names (undefined: none): every fifth CronJob, in one of the groups of its namespace (group j
 * lives in namespace j mod K), round-robin over them.
 */
export function groupOf(i: number, namespaces: number, groups: number): string | undefined {
  if (groups <= 0 || i % 5 !== 0) return undefined;
  const j = spreadOver(i, namespaces, groups);
  return j === undefined ? undefined : groupName(j);
}

/**
 * The limit of the bench's groups: higher than any group's members, so it never holds a run. The bench measures what
 * a group costs the runs that pass through it (the decision, the index reads), not waits the limit makes by design.
 */
export const BENCH_GROUP_LIMIT = 10_000;

/** The G groups, each in its namespace. */
export async function createGroups(client: Client, namespaces: number, groups: number): Promise<void> {
  for (let j = 0; j < groups; j++) {
    await client
      .create(ConcurrencyGroupResource, {
        apiVersion: API_VERSION,
        kind: GROUP_KIND,
        metadata: { name: groupName(j), namespace: namespaceName(j % namespaces) },
        spec: { limit: BENCH_GROUP_LIMIT },
      } as KubeObject)
      .catch((err: unknown) => {
        if (!isAlreadyExists(err)) throw err;
      });
  }
}

/** With --calendars C: another fifth of the CronJobs name one of C ExclusionCalendars, spread over the namespaces. */
export function calendarName(j: number): string {
  return `calendar-${String(j).padStart(3, "0")}`;
}

/**
 * The calendar CronJob i names (undefined: none): every fifth CronJob, the fifth after the groups' (i mod 5 = 1, the
 * groups take i mod 5 = 0, so no CronJob has both), in one of the calendars of its namespace (calendar j lives in
 * namespace j mod K), round-robin over them, as groupOf.
 */
export function calendarOf(i: number, namespaces: number, calendars: number): string | undefined {
  if (calendars <= 0 || i % 5 !== 1) return undefined;
  const j = spreadOver(i, namespaces, calendars);
  return j === undefined ? undefined : calendarName(j);
}

type Windows = ExclusionCalendar["spec"]["windows"];

const DAY_MS = 86_400_000;
const MONTHS = ["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"];
/** How far ahead windowsHoldNoSlot looks: longer than any bench run. */
const NO_SLOT_AHEAD_MS = 7 * DAY_MS;

/** The UTC date `days` days before `now`, as a window writes a whole day (YYYY-MM-DD). */
function daysBefore(now: Date, days: number): string {
  return new Date(now.getTime() - days * DAY_MS).toISOString().slice(0, 10);
}

/**
 * The windows of the bench's calendars and CronJobs, from the clock at the start of a phase. None holds a slot
 * during the run, so the runs are the same work as without exclusions and a comparison measures only what reading
 * and applying them costs: each calendar has 10 whole days 10 to 325 days ago and a recurring window on the 1st of
 * the month six months from now; each CronJob naming one has its own absolute window, a week a year ago. (The
 * bench's CronJobs have no time zone: windows read in UTC, and days this far from now hold no slot in any zone.)
 */
export function benchWindows(now: Date): { calendar: Windows; inline: Windows } {
  const calendar: Windows = [];
  for (let k = 0; k < 10; k++) calendar.push({ start: daysBefore(now, 10 + 35 * k) });
  calendar.push({ daysOfMonth: "1", months: MONTHS[(now.getUTCMonth() + 6) % 12] ?? "JAN" });
  const inline: Windows = [{ start: daysBefore(now, 372), end: daysBefore(now, 366) }];
  windowsHoldNoSlot({ calendar, inline }, now);
  return { calendar, inline };
}

/** Throws unless both lists parse and, together, hold no minute of the week from `now` (UTC). */
function windowsHoldNoSlot(w: { calendar: Windows; inline: Windows }, now: Date): void {
  const sources = [];
  for (const [by, list] of Object.entries(w)) {
    const parsed = parseExclusionWindows(list, by);
    if (!parsed.ok) throw new Error(`the bench's exclusion windows: ${parsed.errors.map((e) => e.message).join("; ")}`);
    sources.push({ by, windows: parsed.windows });
  }
  const exclusions = new Exclusions(sources);
  const first = Math.floor(now.getTime() / 60_000) * 60_000;
  for (let t = first; t <= first + NO_SLOT_AHEAD_MS; t += 60_000) {
    const hit = exclusions.excludedBy(new Date(t), "UTC");
    if (hit)
      throw new Error(`the bench's exclusion windows hold ${new Date(t).toISOString()} (${hit.by}: ${hit.window})`);
  }
}

/** What CronJob i carries: its group (--groups) and, with --calendars, a calendar and its own window. */
export function oursExtras(
  i: number,
  namespaces: number,
  groups: number,
  calendars: number,
  inline: Windows | undefined,
): OursExtras {
  const calendar = calendarOf(i, namespaces, calendars);
  return {
    group: groupOf(i, namespaces, groups),
    exclusions: calendar ? { calendars: [calendar], ...(inline ? { windows: inline } : {}) } : undefined,
  };
}

/** The C calendars, each in its namespace, all with `windows`. */
export async function createCalendars(
  client: Client,
  namespaces: number,
  calendars: number,
  windows: Windows,
): Promise<void> {
  for (let j = 0; j < calendars; j++) {
    await client
      .create(ExclusionCalendarResource, {
        apiVersion: API_VERSION,
        kind: CALENDAR_KIND,
        metadata: { name: calendarName(j), namespace: namespaceName(j % namespaces) },
        spec: { windows },
      } as KubeObject)
      .catch((err: unknown) => {
        if (!isAlreadyExists(err)) throw err;
      });
  }
}

export function builtinCronJob(kind: ResourceKind, namespace: string, name: string): KubeObject {
  return {
    apiVersion: `batch/${kind.version}`,
    kind: "CronJob",
    metadata: { name, namespace },
    spec: cronJobSpec(name),
  };
}

export function rawJob(namespace: string, name: string): KubeObject {
  return {
    apiVersion: "batch/v1",
    kind: "Job",
    metadata: { name, namespace, labels: { app: "bench" } },
    spec: smallJobSpec(),
  };
}

export async function createNamespaces(client: Client, count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    await client
      .create(Kinds.Namespace, { apiVersion: "v1", kind: "Namespace", metadata: { name: namespaceName(i) } })
      .catch((err: unknown) => {
        if (!isAlreadyExists(err)) throw err;
      });
  }
}

/** Create N objects with `inFlight` requests in flight; returns the wall time in seconds. */
export async function createMany(
  client: Client,
  kind: ResourceKind,
  n: number,
  inFlight: number,
  make: (i: number) => KubeObject,
): Promise<number> {
  const started = performance.now();
  await forEachLimit(n, inFlight, async (i) => {
    await client.create(kind, make(i));
  });
  return (performance.now() - started) / 1000;
}

/** An Event like the SuccessfulCreate ours writes for a run (runtime/events/recorder.ts's fields). */
export function benchEvent(namespace: string, cronJob: string, at: string, seq: number): KubeObject {
  return {
    apiVersion: "v1",
    kind: "Event",
    metadata: { name: `${cronJob}.18${seq.toString(16).padStart(14, "0")}`, namespace },
    involvedObject: {
      kind: KIND,
      namespace,
      name: cronJob,
      uid: "5d1b3c8e-7f7a-4d0e-9a53-0c3f3f1b2a10",
      apiVersion: API_VERSION,
      resourceVersion: "123456",
    },
    reason: "SuccessfulCreate",
    message: `Created job ${cronJob}-29391840`,
    type: "Normal",
    source: { component: "cronjob-controller", host: "cronjob-operator-controller-manager-7d9c6b5f4-x2k8p" },
    reportingComponent: "cronjob-controller",
    reportingInstance: "cronjob-operator-controller-manager-7d9c6b5f4-x2k8p",
    firstTimestamp: at,
    lastTimestamp: at,
    count: 1,
  } as KubeObject;
}
