// dist/install.yaml keeps its manager image through `make manifests` (hack/crdgen/installer.ts): a
// `make build-installer IMG=…` result is not silently turned back into controller:latest by `make manifests`,
// `make deploy` or `make run`, and what they write is what build-installer writes for that image.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { after, describe, it } from "node:test";
import { parseAllDocuments } from "yaml";
import { DEFAULT_MANAGER_IMAGE, keepManagerImage, managerImageOf } from "../../hack/crdgen/installer.ts";

const root = resolve(import.meta.dirname, "..", "..");
const KUBECTL = process.env.KUBECTL ?? "kubectl";
const IMG = "registry.example.com/team/cronjob-operator:v1.2.3";

function kustomize(dir: string): string {
  const r = spawnSync(KUBECTL, ["kustomize", dir], { encoding: "utf8", maxBuffer: 64 << 20 });
  if (r.error) assert.fail(`cannot run ${KUBECTL} (kustomize is built into kubectl ≥ 1.14): ${r.error.message}`);
  assert.equal(r.status, 0, r.stderr);
  return r.stdout;
}

describe("dist/install.yaml's manager image (make manifests vs make build-installer IMG=…)", () => {
  const tmp = mkdtempSync(join(tmpdir(), "installer-"));
  after(() => rmSync(tmp, { recursive: true, force: true }));
  const rendered = kustomize(join(root, "config", "default"));

  // What build-installer writes: config/default through an overlay that sets the manager's image, as the
  // Makefile's KUSTOMIZE_DEFAULT builds it.
  function buildInstaller(img: string): string {
    const overlay = mkdtempSync(join(tmp, "overlay-"));
    writeFileSync(
      join(overlay, "kustomization.yaml"),
      [
        "apiVersion: kustomize.config.k8s.io/v1beta1",
        "kind: Kustomization",
        "resources:",
        `- ${relative(overlay, join(root, "config", "default"))}`,
        "images:",
        "- name: controller",
        `  newName: ${img.slice(0, img.lastIndexOf(":"))}`,
        `  newTag: ${img.slice(img.lastIndexOf(":") + 1)}`,
        "",
      ].join("\n"),
    );
    return kustomize(overlay);
  }

  it("the Makefile's build-installer sets the image the way this test's overlay does", () => {
    const makefile = readFileSync(join(root, "Makefile"), "utf8");
    assert.ok(
      makefile.includes(`'images:' '- name: controller' \\\n\t  "  newName: $$name" "  $$ref"`),
      "KUSTOMIZE_DEFAULT sets the image with images: (name controller)",
    );
    assert.match(makefile, /^build-installer: manifests /m);
  });

  it("reads the manager image of an installer", () => {
    assert.equal(managerImageOf(rendered), DEFAULT_MANAGER_IMAGE);
    assert.equal(managerImageOf(buildInstaller(IMG)), IMG);
    assert.equal(managerImageOf("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: x\n"), undefined);
  });

  it("make manifests over a build-installer result writes exactly what build-installer wrote", () => {
    const built = buildInstaller(IMG);
    assert.notEqual(built, rendered);
    assert.equal(keepManagerImage(rendered, built), built);
    // Only the image lines of the manager's containers (it and the second webhook server) differ.
    const diff = rendered.split("\n").filter((l, i) => l !== built.split("\n")[i]);
    assert.deepEqual(
      diff.map((l) => l.trim()),
      [`image: ${DEFAULT_MANAGER_IMAGE}`, `image: ${DEFAULT_MANAGER_IMAGE}`],
    );
  });

  it("with no installer yet, or one with the default image, it is the plain render", () => {
    assert.equal(keepManagerImage(rendered, undefined), rendered);
    assert.equal(keepManagerImage(rendered, rendered), rendered);
  });

  it("validates ExclusionCalendars and ConcurrencyGroups at admission, as the CronJobs (issue 53)", () => {
    const file = readFileSync(join(root, "dist", "install.yaml"), "utf8");
    const installed = parseAllDocuments(file).map(
      (d) => d.toJS() as { kind: string; webhooks?: Array<Record<string, any>> },
    );
    const hooks = installed.find((o) => o.kind === "ValidatingWebhookConfiguration")?.webhooks ?? [];
    assert.deepEqual(
      hooks.map((w) => [w.name, w.rules[0].resources, w.rules[0].operations, w.clientConfig.service.name]),
      [
        ["vcronjob-v1.kb.io", ["cronjobs"], ["CREATE", "UPDATE"], "cronjob-operator-webhook-service"],
        [
          "vexclusioncalendar-v1.kb.io",
          ["exclusioncalendars"],
          ["CREATE", "UPDATE"],
          "cronjob-operator-webhook-service",
        ],
        ["vconcurrencygroup-v1.kb.io", ["concurrencygroups"], ["CREATE", "UPDATE"], "cronjob-operator-webhook-service"],
      ],
    );
    // It is config/default as rendered now (with its own manager image): make manifests wrote it.
    assert.equal(keepManagerImage(rendered, file), file, "dist/install.yaml is stale: run make manifests");
  });

  it("refuses an image that is no image reference instead of writing broken YAML", () => {
    const broken = rendered.replace(`image: ${DEFAULT_MANAGER_IMAGE}`, 'image: "a b: c"');
    assert.throws(() => keepManagerImage(rendered, broken), /the manager image "a b: c" is not an image reference/);
  });
});
