// Test fixtures shared by unit and integration tests.
import type { CronJobInput } from "../api/v1/index.ts";
import { API_VERSION, KIND } from "../api/v1/index.ts";

// The Jobs' fixtures live beside the control plane's code, where the benchmark may use them too.
export { batchJob, createJob, jobStatus, type JobFixture, type JobState } from "../envtest/jobs.ts";

/** A minimal valid CronJob as a user would write it (defaulted fields omitted). */
export function minimalCronJob(name: string, namespace = "default"): CronJobInput {
  return {
    apiVersion: API_VERSION,
    kind: KIND,
    metadata: { name, namespace },
    spec: {
      schedule: "*/5 * * * *",
      jobTemplate: {
        spec: {
          template: {
            spec: {
              restartPolicy: "OnFailure",
              containers: [{ name: "hello", image: "busybox:1.36", args: ["echo", "hello"] }],
            },
          },
        },
      },
    },
  };
}

/** A deep copy with `mutate` applied, typed loosely so tests can build invalid objects. */
export function variant(base: object, mutate: (o: Record<string, any>) => void): Record<string, any> {
  const copy = structuredClone(base) as Record<string, any>;
  mutate(copy);
  return copy;
}

/** The Available condition the controller writes on a CronJob that schedules, as of 2026-01-01. */
export const SCHEDULED_CONDITION = {
  type: "Available",
  status: "True",
  reason: "Scheduled",
  message: "",
  lastTransitionTime: "2026-01-01T00:00:00Z",
};
