// One table, all the words (issue 42): a cause's fix is written once, in its row of cmd/kubectl-cron/causes.ts, as a
// function of the facts. `kubectl cron why` says it with the names it found (kubectl-cron-why.test.ts holds every
// diagnosis it makes to its row, through test/cause-words.ts), docs/troubleshooting.md and the runbooks with the
// placeholders; the diagnosis's modules write no fix of their own and rewrite no row's text.
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, it } from "node:test";
import { CAUSES, PLACEHOLDERS } from "../../cmd/kubectl-cron/causes.ts";
import { runbookPaths, TROUBLESHOOTING_PATH } from "../../hack/apidocs/causes.ts";
import { fixDiffersFromRow } from "../cause-words.ts";

const root = resolve(import.meta.dirname, "..", "..");
const read = (rel: string) => readFileSync(join(root, rel), "utf8");
const words = (c: (typeof CAUSES)[number]) => c.fix(PLACEHOLDERS).join(" ");

describe("a cause's fix: its row's words, wherever it is said", () => {
  it("docs/troubleshooting.md says each cause's fix as its row does, with the placeholders", () => {
    const page = read(TROUBLESHOOTING_PATH);
    for (const c of CAUSES) {
      const section = page.slice(page.indexOf(`\n### ${c.id}\n`) + 1).split(/\n(?=### |<!-- causes: end)/)[0]!;
      const said = section.split("\n").filter((l) => l.startsWith("- What to do: "));
      assert.deepEqual(said, [`- What to do: ${words(c)}`], `${c.id}: its fix on the page`);
    }
  });

  it("each runbook says the fix of each cause behind its alert as the row does", () => {
    for (const rel of runbookPaths()) {
      const page = read(rel);
      const alert = /([^/]+)\.md$/.exec(rel)![1]!;
      for (const c of CAUSES.filter((x) => "alert" in x && x.alert === alert)) {
        const link = `- [${c.title}](../troubleshooting.md#${c.id}): `;
        const said = page.split("\n").filter((l) => l.startsWith(link));
        assert.deepEqual(said, [`${link}${words(c)}`], `${rel}: ${c.id}`);
      }
    }
  });

  it("every line of a row's fix reads as a line the command may say, and a reworded line does not", () => {
    for (const c of CAUSES) {
      const lines = c.fix(PLACEHOLDERS);
      assert.ok(lines.length > 0, `${c.id}: a fix`);
      assert.equal(fixDiffersFromRow(c.id, lines), undefined, c.id);
      for (const line of lines) {
        assert.notEqual(fixDiffersFromRow(c.id, [`${line} (reworded)`]), undefined, `${c.id}: ${line}`);
        assert.notEqual(fixDiffersFromRow(c.id, [line.toLowerCase() + "!"]), undefined, `${c.id}: ${line}`);
      }
    }
    // The command's names fill the placeholders; a missing one ("undefined") does not.
    const names = { ...PLACEHOLDERS, name: "backup", namespace: "prod", job: "backup-1795572000" };
    assert.equal(fixDiffersFromRow("forbid-held", CAUSES.find((c) => c.id === "forbid-held")!.fix(names)), undefined);
    assert.notEqual(
      fixDiffersFromRow("forbid-held", ["Delete the hung Job: `kubectl delete job undefined -n prod`."]),
      undefined,
    );
  });

  it("the diagnosis (cmd/kubectl-cron/why.ts and why/) writes no fix and rewrites no row's text", () => {
    const dir = join(root, "cmd", "kubectl-cron", "why");
    const files = ["cmd/kubectl-cron/why.ts", ...readdirSync(dir).map((f) => `cmd/kubectl-cron/why/${f}`)];
    assert.ok(files.length > 5, "the diagnosis's modules");
    for (const rel of files) {
      const src = read(rel);
      assert.doesNotMatch(src, /\.replace(All)?\(/, `${rel}: no text rewritten (a row's fix takes its names)`);
      assert.doesNotMatch(src, /\bcauseOf\(/, `${rel}: a fix through fixOf or found, never a row read directly`);
      assert.doesNotMatch(src, /\bfix:\s*\[\s*[^\]\s]/, `${rel}: no fix written out (only fix: [] when healthy)`);
    }
  });
});
