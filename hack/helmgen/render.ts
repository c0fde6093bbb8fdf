// The config/ overlays the chart is made from, rendered by kubectl's built-in kustomize.
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { parseAllDocuments } from "yaml";

// Rendered objects of every kind config/ has; the generator reads the fields it knows and checks them.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Obj = Record<string, any>;

export function kustomize(dir: string): Obj[] {
  let out: string;
  try {
    out = execFileSync("kubectl", ["kustomize", dir], {
      encoding: "utf8",
      maxBuffer: 64 * 1024 * 1024,
      stdio: ["ignore", "pipe", "pipe"],
    });
  } catch (err) {
    const stderr = (err as { stderr?: string }).stderr?.trim();
    throw new Error(`kubectl kustomize ${dir} failed (needed for dist/chart): ${stderr || String(err)}`);
  }
  return parseAllDocuments(out)
    .map((d) => d.toJS() as Obj | null)
    .filter((o): o is Obj => o !== null);
}

/**
 * Overlays that config/default only mentions in comments (prometheus, network-policy), rendered with
 * config/default's namespace and name prefix, as they are when uncommented there.
 */
export function kustomizeWith(root: string, dirs: string[], namespace: string, namePrefix: string): Obj[] {
  const overlay = mkdtempSync(join(tmpdir(), "helmgen-"));
  try {
    const resources = dirs.map((d) => `- ${relative(overlay, join(root, d))}`);
    writeFileSync(
      join(overlay, "kustomization.yaml"),
      [`namespace: ${namespace}`, `namePrefix: ${namePrefix}`, "resources:", ...resources, ""].join("\n"),
    );
    return kustomize(overlay);
  } finally {
    rmSync(overlay, { recursive: true, force: true });
  }
}

export const objectKey = (o: Obj): string => `${o.kind}/${o.metadata?.name}`;
