// The manager's namespace (the lease's and the webhook certificate's default) is read in one place.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { podNamespace } from "../../../runtime/podnamespace.ts";

describe("podNamespace", () => {
  const dir = mkdtempSync(join(tmpdir(), "podns-"));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const file = (name: string, text: string) => {
    const p = join(dir, name);
    writeFileSync(p, text);
    return p;
  };

  it("prefers POD_NAMESPACE over the service account's file", () => {
    assert.equal(podNamespace({ POD_NAMESPACE: "from-env" }, file("a", "from-file\n")), "from-env");
  });

  it("falls back to the service account's namespace file, trimmed", () => {
    assert.equal(podNamespace({}, file("b", "cronjob-operator-system\n")), "cronjob-operator-system");
    assert.equal(podNamespace({ POD_NAMESPACE: "" }, file("c", "  other \n")), "other");
  });

  it("is undefined without either (outside a cluster), or with an empty file", () => {
    assert.equal(podNamespace({}, join(dir, "missing")), undefined);
    assert.equal(podNamespace({}, file("d", "\n")), undefined);
  });
});
