// Group, version and names of the CronJob API v2 (kubebuilder's groupversion_info.go). The group, kind and
// resource are v1's: one resource served in two versions, v1 the hub and the storage version.
import { GROUP } from "../v1/index.ts";

export const VERSION = "v2";
export const API_VERSION = `${GROUP}/${VERSION}`;
