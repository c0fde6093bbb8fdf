// Group, version and names of the CronJob API (kubebuilder's groupversion_info.go).

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
 * The label every Job the controller creates carries, valued with its CronJob's name (≤ 52 characters, so
 * always a valid label value): `kubectl get jobs -l batch.tutorial.kubebuilder.io/cronjob-name=NAME`.
 */
export const CRONJOB_NAME_LABEL = `${GROUP}/cronjob-name`;
