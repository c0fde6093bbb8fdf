// The inputs' list: what a CronJob reads of other objects, an entry each (input.ts says what an entry brings). The
// reconciler, the conditions, the admission webhook and cmd/run.ts loop over it; an entry's order is Degraded's:
// the first input with a problem is the one it says.
import type { CacheIndexer, CacheReader } from "../runtime/interfaces.ts";
import type { ResourceKind } from "../runtime/kinds.ts";
import type { ScrapeTimeMetric } from "../runtime/metrics/collector.ts";
import type { AdmissionCheck } from "../webhooks/admission_check.ts";
import { AFTER_INPUT } from "./after.ts";
import { CALENDAR_INPUT } from "./calendars.ts";
import { GROUP_INPUT } from "./groups.ts";
import type { InputCronJob, InputProblem, InputReader, InputWatch } from "./input.ts";

/** Every input, by the name its value has in a pass (a trigger's source input, a step's read). */
const INPUTS = {
  group: GROUP_INPUT,
  exclusions: CALENDAR_INPUT,
  upstreams: AFTER_INPUT,
} as const;

type Inputs = typeof INPUTS;

/** The inputs' readers, by name: one set per reconciler. */
export type InputReaders = { readonly [K in keyof Inputs]: ReturnType<Inputs[K]["reader"]> };

/** A pass's values of the inputs, by name. */
export type InputValues = { readonly [K in keyof Inputs]: ReturnType<InputReaders[K]["read"]>["value"] };

const entries = () => Object.entries(INPUTS) as [keyof Inputs, Inputs[keyof Inputs]][];
const all = (readers: InputReaders) => Object.values(readers) as InputReader<unknown>[];

/** Every input's cache indexes, registered before the cache starts. */
export function setupInputCaches(cache: CacheIndexer): void {
  for (const [, input] of entries()) input.setupCache(cache);
}

/** A reader of every input over `cache`. */
export function inputReaders(cache: CacheReader): InputReaders {
  const readers: Partial<Record<keyof Inputs, InputReader<unknown>>> = {};
  for (const [name, input] of entries()) readers[name] = input.reader(cache);
  return readers as InputReaders;
}

/** A CronJob's read of every input this pass: the values by name, and the problems in the list's order. */
export function readInputs(
  readers: InputReaders,
  cronJob: InputCronJob,
): { values: InputValues; problems: InputProblem[] } {
  const values: Record<string, unknown> = {};
  const problems: InputProblem[] = [];
  for (const [name, reader] of Object.entries(readers) as [string, InputReader<unknown>][]) {
    const read = reader.read(cronJob);
    values[name] = read.value;
    if (read.problem) problems.push(read.problem);
  }
  return { values: values as InputValues, problems };
}

/** The watches of every input: what wakes the CronJobs reading it. */
export function inputWatches(readers: InputReaders, now: () => number): InputWatch[] {
  return all(readers).flatMap((r) => r.watches(now));
}

/** A CronJob deleted: every reader forgets it. */
export function forgetInputs(readers: InputReaders, namespace: string, name: string): void {
  for (const r of all(readers)) r.forget?.(namespace, name);
}

/** Every input's gauges. */
export function inputMetrics(
  readers: InputReaders,
  o: { now: () => number; isLeader: () => boolean },
): ScrapeTimeMetric[] {
  return all(readers).flatMap((r) => r.metrics?.(o) ?? []);
}

/** Every input's check at admission, over the readers' cache. */
export function admissionChecks(readers: InputReaders, covers: (namespace: string) => boolean): AdmissionCheck[] {
  return all(readers).flatMap((r) => (r.admission ? [r.admission(covers)] : []));
}

/** The kinds the admission checks read: a webhooks-only server's cache watches these alone. */
export function admissionKinds(): ResourceKind[] {
  return entries().flatMap(([, input]) => [
    ...((input as { admissionKinds?: readonly ResourceKind[] }).admissionKinds ?? []),
  ]);
}
