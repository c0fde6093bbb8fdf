// v1 ↔ v2, with v1 the hub (and the storage version): the conversion webhook turns every object into the
// version a client asked for, through these two pure functions. Lossless both ways, as Kubernetes' own
// conversions keep what an older version lacks: a v2 object's schedules after the first are kept on the v1
// object in an annotation, which the v1 → v2 direction takes back, so a v1 client that reads and writes an
// object written as v2 loses nothing.
//
// The conversion never fails: the API server calls it on every read of the other version, and a stored object
// it cannot convert could then not be read, listed or deleted in that version. What it cannot interpret (an
// annotation a user wrote by hand) it carries over as it is.
import {
  API_VERSION as V1,
  MORE_SCHEDULES_ANNOTATION,
  moreSchedulesValue,
  parseMoreSchedules,
  type ScheduleEntry,
} from "../v1/index.ts";
import { isObj } from "../../runtime/objects.ts";
import { API_VERSION as V2 } from "./groupversion_info.ts";

type Obj = Record<string, unknown>;

/** `obj` (a CronJob of either version, as JSON) in `apiVersion`; an object already there is returned as it is. */
export function convertCronJob(obj: Obj, apiVersion: string): Obj {
  if (obj.apiVersion === apiVersion) return obj;
  if (obj.apiVersion === V1 && apiVersion === V2) return v1ToV2(obj);
  if (obj.apiVersion === V2 && apiVersion === V1) return v2ToV1(obj);
  throw new Error(`cannot convert a CronJob from ${String(obj.apiVersion)} to ${apiVersion}`);
}

function v1ToV2(obj: Obj): Obj {
  const spec = isObj(obj.spec) ? obj.spec : {};
  const { schedule, timeZone, ...rest } = spec;
  const annotations = annotationsOf(obj);
  const more = parseMoreSchedules(annotations[MORE_SCHEDULES_ANNOTATION]);
  const first: ScheduleEntry = { schedule, ...(timeZone !== undefined ? { timeZone } : {}) };
  // A CronJob with no schedule of its own (spec.after only) has none in v2 either.
  const schedules = schedule === undefined && timeZone === undefined && !more ? [] : [first, ...(more ?? [])];
  const out: Obj = { ...obj, apiVersion: V2, spec: { schedules, ...rest } };
  // Taken back into spec.schedules: the annotation is v1's book, not part of the v2 object. One that does not
  // parse stays, so nothing is lost.
  if (more !== undefined) out.metadata = withAnnotation(obj, undefined);
  if (!isObj(obj.spec)) delete out.spec;
  return out;
}

function v2ToV1(obj: Obj): Obj {
  const spec = isObj(obj.spec) ? obj.spec : {};
  const { schedules, ...rest } = spec;
  const list = Array.isArray(schedules) ? (schedules as unknown[]) : [];
  const [first, ...more] = list;
  const head = isObj(first) ? first : {};
  const out: Obj = {
    ...obj,
    apiVersion: V1,
    spec: {
      ...(head.schedule !== undefined ? { schedule: head.schedule } : {}),
      ...(head.timeZone !== undefined ? { timeZone: head.timeZone } : {}),
      ...rest,
    },
  };
  // The annotation is the conversion's book alone: the admission webhook refuses it on a v2 object, so one with
  // a single schedule has none to carry over (one written with admission bypassed would read back as more schedules).
  if (more.length > 0) out.metadata = withAnnotation(obj, moreSchedulesValue(more));
  if (!isObj(obj.spec)) delete out.spec;
  return out;
}

function annotationsOf(obj: Obj): Record<string, string> {
  const meta = isObj(obj.metadata) ? obj.metadata : {};
  return isObj(meta.annotations) ? (meta.annotations as Record<string, string>) : {};
}

/** The object's metadata with the annotation set to `value`, or removed (and no empty annotations left). */
function withAnnotation(obj: Obj, value: string | undefined): Obj {
  const meta = isObj(obj.metadata) ? obj.metadata : {};
  const { [MORE_SCHEDULES_ANNOTATION]: _old, ...others } = annotationsOf(obj);
  const annotations = value === undefined ? others : { ...others, [MORE_SCHEDULES_ANNOTATION]: value };
  const { annotations: _a, ...restMeta } = meta;
  return Object.keys(annotations).length > 0 ? { ...restMeta, annotations } : restMeta;
}
