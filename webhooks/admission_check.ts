// The seam between the CronJob webhook and what a CronJob reads of other objects (controllers/input.ts): each input
// brings a check over the manager's cache, and the webhook runs every one it is given, naming none. The checks of
// today's inputs are here and in exclusion_checks.ts, beside the static checks of the same fields.
import { afterCycle, type CronJobSchedules, upstreamsOf } from "../api/v1/index.ts";
import { type FieldError, invalidField } from "../runtime/field.ts";

/** What an input's check reads of the request. */
interface AdmissionCheckInput {
  readonly name: string;
  readonly namespace: string;
  readonly spec: Record<string, unknown>;
  /** The CronJob's schedules as written (undefined: none, or they do not parse). */
  readonly schedules: CronJobSchedules | undefined;
  readonly now: Date;
  /** spec.exclusions' own windows passed the static check (a calendar's check says nothing more until they do). */
  readonly exclusionsValid: boolean;
}

/** An input's check at admission: errors refuse the request, warnings are returned with it. */
export type AdmissionCheck = (o: AdmissionCheckInput) => { errors?: FieldError[]; warnings?: string[] };

/** A CronJob's spec.after names, as the manager's cache holds it (undefined: it has none, or is not there). */
type UpstreamLookup = (namespace: string, name: string) => readonly string[] | undefined;

/**
 * spec.after making a cycle with the CronJobs of the cluster (as the manager's cache holds them): "b runs after a,
 * which runs after b" would run each after the other for ever. The controller refuses to run such a chain too
 * (a cycle made by two requests admitted at once, or with admission bypassed).
 */
export function afterCycleCheck(upstreams: UpstreamLookup): AdmissionCheck {
  return ({ name, namespace, spec }) => {
    const after = upstreamsOf(spec).map((u) => u.cronJob);
    if (!after.length || !name) return {};
    const path = afterCycle(name, after, (other) => upstreams(namespace, other));
    if (!path) return {};
    return {
      errors: [
        invalidField(
          "spec.after",
          spec.after,
          `makes a cycle: ${path.join(" runs after ")}; a CronJob cannot run after its own runs`,
        ),
      ],
    };
  };
}
