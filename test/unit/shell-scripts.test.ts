// Every shell script of the project parses (`bash -n`): a quoting slip in one that only CI or a cold machine runs
// (.ci/run, hack/setup-envtest, hack/kube-source) would otherwise show only there.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { describe, it } from "node:test";

const root = resolve(import.meta.dirname, "..", "..");

function* scripts(dir: string): Generator<string> {
  for (const name of readdirSync(dir)) {
    const abs = join(dir, name);
    if (statSync(abs).isDirectory()) yield* scripts(abs);
    else if (/^#!.*\b(bash|sh)\b/.test(readFileSync(abs, "utf8").split("\n", 1)[0] ?? "")) yield abs;
  }
}

describe("shell scripts", () => {
  it("every one parses (bash -n)", () => {
    const found = [...scripts(join(root, "hack")), ...scripts(join(root, ".ci"))];
    assert.ok(found.some((f) => f.endsWith(".ci/run")) && found.some((f) => f.endsWith("hack/kube-source")));
    const broken = found.flatMap((f) => {
      const r = spawnSync("bash", ["-n", f], { encoding: "utf8" });
      return r.status === 0 ? [] : [`${relative(root, f)}: ${r.stderr.trim()}`];
    });
    assert.deepEqual(broken, []);
  });
});
