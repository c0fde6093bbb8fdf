// `kubectl cron why` (issue 38): every cause of cmd/kubectl-cron/answer/causes.ts is staged and asked about by the
// kubectl-cron-why-<family>.test.ts files. Each runs in a process of its own, so no one of them sees them all: each
// says which causes its cases reproduce (FAMILIES, test/why-scene.ts) and checks, as its last test, that its
// diagnoses found each (producesItsCauses). Here: every row is some family's, and every family's file checks.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { CAUSES } from "../../cmd/kubectl-cron/answer/causes.ts";
import { FAMILIES } from "../why-scene.ts";

describe("kubectl cron why: every cause of causes.ts", () => {
  it("each row of the table is reproduced by the cases of a family (as the verdict or as an `also` finding)", () => {
    const claimed = new Set<string>(Object.values(FAMILIES).flat());
    assert.deepEqual(
      CAUSES.map((c) => c.id).filter((id) => !claimed.has(id)),
      [],
      "causes no family's cases reproduce",
    );
  });

  it("each family's file checks, as its last test, that its cases reproduce its causes", () => {
    for (const family of Object.keys(FAMILIES)) {
      const file = new URL(`kubectl-cron-why-${family}.test.ts`, import.meta.url);
      const lines = readFileSync(file, "utf8").trimEnd().split("\n");
      assert.equal(lines.at(-1), `producesItsCauses(${JSON.stringify(family)});`, file.pathname);
    }
  });
});
