// dist/install.yaml keeps the manager image it was built with. `make build-installer IMG=…` writes it with
// that image (kubebuilder's convention: the file to publish), while `make manifests`, which `make deploy` and
// `make run` run too, regenerates it from config/default (image controller:latest). Without this, any of them
// silently put controller:latest back over a build-installer result; with it, they bring everything else up to
// date and keep the image, and `make build-installer` without IMG is how to go back to controller:latest.
import { parseAllDocuments } from "yaml";

/** The image config/manager names, which build-installer and deploy replace with IMG. */
export const DEFAULT_MANAGER_IMAGE = "controller:latest";

interface Deployment {
  kind?: string;
  metadata?: { labels?: Record<string, string> };
  spec?: { template?: { spec?: { containers?: Array<{ image?: unknown }> } } };
}

/** The manager Deployment's (control-plane: controller-manager) first container's image in a rendered installer. */
export function managerImageOf(installer: string): string | undefined {
  for (const doc of parseAllDocuments(installer)) {
    const o = doc.toJS() as Deployment | null;
    if (o?.kind !== "Deployment" || o.metadata?.labels?.["control-plane"] !== "controller-manager") continue;
    const image = o.spec?.template?.spec?.containers?.[0]?.image;
    return typeof image === "string" ? image : undefined;
  }
  return undefined;
}

/**
 * `rendered` (config/default as kustomize renders it, image controller:latest) with the manager image of
 * `existing` (the dist/install.yaml on disk, if any), as build-installer writes it for that image.
 */
export function keepManagerImage(rendered: string, existing: string | undefined): string {
  const image = existing === undefined ? undefined : managerImageOf(existing);
  if (image === undefined || image === DEFAULT_MANAGER_IMAGE) return rendered;
  if (!/^[\w.\-/:@]+$/.test(image)) {
    throw new Error(`dist/install.yaml: the manager image ${JSON.stringify(image)} is not an image reference`);
  }
  const line = new RegExp(`^(\\s+)image: ${DEFAULT_MANAGER_IMAGE.replace(/[.]/g, "\\.")}$`, "gm");
  // The manager's container and the Pod's second webhook server run the one image (build-installer sets both).
  const found = rendered.match(line)?.length ?? 0;
  if (found === 0) throw new Error(`config/default renders no "image: ${DEFAULT_MANAGER_IMAGE}" line`);
  return rendered.replace(line, `$1image: ${image}`);
}
