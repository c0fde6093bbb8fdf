// Group, version and names of the CronJob API (kubebuilder's groupversion_info.go).

export const GROUP = "batch.tutorial.kubebuilder.io";
export const VERSION = "v1";
export const API_VERSION = `${GROUP}/${VERSION}`;
export const KIND = "CronJob";
export const LIST_KIND = "CronJobList";
export const PLURAL = "cronjobs";
export const SINGULAR = "cronjob";

/** The fully-qualified resource name, as used by kubectl and in the CRD's metadata.name. */
export const RESOURCE = `${PLURAL}.${GROUP}`;
