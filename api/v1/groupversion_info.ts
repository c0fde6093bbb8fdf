// Group, version and names of the CronJob API (kubebuilder's groupversion_info.go).
import { documentedKey } from "./metadata.ts";

export const GROUP = "batch.tutorial.kubebuilder.io";
export const VERSION = "v1";
export const API_VERSION = `${GROUP}/${VERSION}`;
export const KIND = "CronJob";
export const LIST_KIND = "CronJobList";
export const PLURAL = "cronjobs";
export const SINGULAR = "cronjob";

/**
 * `kubectl get cron`: the kind's own names collide with the built-in CronJob (which kubectl prefers, and which
 * owns the short name `cj`), so every command would otherwise need the full resource name.
 */
export const SHORT_NAMES = ["cron", "crons"] as const;
/** `kubectl get all` lists them, as it lists built-in CronJobs. */
export const CATEGORIES = ["all"] as const;

/** The fully-qualified resource name, as used by kubectl and in the CRD's metadata.name. */
export const RESOURCE = `${PLURAL}.${GROUP}`;

/** How clients address CronJobs (the runtime's ResourceKind shape). */
export const CronJobResource = {
  group: GROUP,
  version: VERSION,
  kind: KIND,
  plural: PLURAL,
  namespaced: true,
} as const;

/**
 * Longest CronJob name: a Job is named `<cronjob>-<scheduled time in Unix seconds>` (11 more characters)
 * and, with the `job-name` label of its Pods, must fit in 63.
 */
export const MAX_CRONJOB_NAME_LENGTH = 52;
/**
 * The label every Job the controller creates carries, valued with its CronJob's name (≤ 52 characters, so
 * always a valid label value): `kubectl get jobs -l batch.tutorial.kubebuilder.io/cronjob-name=NAME`.
 */
export const CRONJOB_NAME_LABEL: string = documentedKey(`${GROUP}/cronjob-name`, () => ({
  on: "Job (every Job the controller creates)",
  setBy: "the controller (a template label of the same key is replaced)",
  format: `the CronJob's name (at most ${MAX_CRONJOB_NAME_LENGTH} characters)`,
  meaning: `The CronJob the Job belongs to: \`kubectl get jobs -l ${CRONJOB_NAME_LABEL}=NAME\`. Not put on the Pods.`,
}));
