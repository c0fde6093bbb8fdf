// One table, all the words (issue 42): a cause's verdict and fix are written once, in its row of
// cmd/kubectl-cron/answer/causes.ts, as functions of the facts, and so is what keeps the next slot from running (a row's
// `next`, issue 55). `kubectl cron why` says them with the facts it found (the kubectl-cron-why-*.test.ts files hold
// every diagnosis it makes, and each `also` finding, to its row through test/cause-words.ts), docs/troubleshooting.md
// (and the runbooks, the fix) with the placeholders; the diagnosis's modules gather facts and write no verdict,
// finding, fix or next-slot words of their own (no string of theirs says a piece of a sentence the table says), and
// rewrite no row's text. The verdicts that name no cause have their small table too (NO_CAUSE).
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, it } from "node:test";
import { CAUSES, NO_CAUSE, PLACEHOLDERS } from "../../cmd/kubectl-cron/answer/causes.ts";
import { runbookPaths, TROUBLESHOOTING_PATH } from "../../hack/apidocs/causes.ts";
import ts from "typescript";
import {
  fixDiffersFromRow,
  fixedTexts,
  renderings,
  saysAs,
  saysPiece,
  tableSentences,
  trimmed,
  verdictDiffersFromNoCause,
  verdictDiffersFromRow,
} from "../cause-words.ts";

const root = resolve(import.meta.dirname, "..", "..");

/** The text of each string literal and template of a TypeScript source, a template's between its substitutions. */
function literalsOf(src: string): { line: number; text: string }[] {
  const file = ts.createSourceFile("literals.ts", src, ts.ScriptTarget.Latest, true);
  const out: { line: number; text: string }[] = [];
  const visit = (n: ts.Node) => {
    const line = file.getLineAndCharacterOfPosition(n.getStart()).line + 1;
    if (ts.isStringLiteral(n) || ts.isNoSubstitutionTemplateLiteral(n)) out.push({ line, text: n.text });
    if (ts.isTemplateExpression(n)) {
      for (const part of [n.head, ...n.templateSpans.map((s) => s.literal)]) out.push({ line, text: part.text });
    }
    n.forEachChild(visit);
  };
  visit(file);
  return out;
}

/** Where `src` writes out some of the table's own words (`texts`): "line N: its literal ~ the table's piece". */
function tableWordsIn(src: string, texts: readonly string[]): string[] {
  return literalsOf(src).flatMap(({ line, text }) =>
    texts.filter((t) => saysPiece(trimmed(text), t)).map((t) => `line ${line}: ${JSON.stringify(text)} ~ ${t}`),
  );
}

/**
 * What nextBlocker() and groupBlocker() wrote before their words were the table's (rows' `next`): the guard below
 * must find each of these sentences written out.
 */
const WRITTEN_OUT_NEXT = [
  'if (cj.spec?.suspend) return "suspended: it will not run until resumed";',
  'if (cj.status?.stopped) return "stopped after failures: it will not run until resumed";',
  "if (hold) return `${CALENDAR_KIND} ${hold.calendar} does not exist: it will not run until it does`;",
  'if (hold) return "spec.exclusions cannot be read: it will not run until it is fixed";',
  "if (running.length) return `concurrencyPolicy Forbid: it will not run while ${running.join(', ')} runs`;",
  "if (down) return `${finding(down).summary}: nothing runs until it is back`;",
  "if (g.exists === false) return `ConcurrencyGroup ${g.name} does not exist: it will not run until it does`;",
  "if (full) return `group ${g.name} is at ${g.running.length}/${g.limit}: it waits for a place`;",
];
const read = (rel: string) => readFileSync(join(root, rel), "utf8");
const words = (c: (typeof CAUSES)[number]) => c.fix(PLACEHOLDERS).join(" ");
/** Words with their longest own word (not a placeholder's) changed: a placeholder may stand for anything but not that. */
const reworded = (s: string) => {
  const longest = (s.match(/\b[a-z]{3,}\b/g) ?? []).sort((a, b) => b.length - a.length)[0] ?? "";
  const r = s.replace(new RegExp(`\\b${longest}\\b`), longest.toUpperCase());
  assert.notEqual(r, s, `${s}: a word to change`);
  return r;
};

describe("a cause's verdict and fix: its row's words, wherever they are said", () => {
  it("docs/troubleshooting.md says each cause's verdict as its row does, with the placeholders", () => {
    const page = read(TROUBLESHOOTING_PATH);
    for (const c of CAUSES) {
      const section = page.slice(page.indexOf(`\n### ${c.id}\n`) + 1).split(/\n(?=### |<!-- causes: end)/)[0]!;
      const said = section.split("\n").filter((l) => l.startsWith("- What `kubectl cron why` says: "));
      assert.deepEqual(
        said,
        [`- What \`kubectl cron why\` says: ${c.verdict(PLACEHOLDERS)}`],
        `${c.id}: its verdict on the page`,
      );
    }
  });

  it("every rendering of a row's verdict reads as words the command may say, and reworded words do not", () => {
    for (const c of CAUSES) {
      const all = renderings(c.verdict);
      assert.ok(all.includes(c.verdict(PLACEHOLDERS)), `${c.id}: the docs' words are one of its renderings`);
      for (const words of all) {
        const as = renderings(c.verdict, "verdict").includes(words) ? "verdict" : "finding";
        assert.equal(verdictDiffersFromRow(c.id, words, as), undefined, `${c.id}: ${words}`);
        assert.ok(!saysAs(words, reworded(words)), `${c.id}: ${words}`);
        assert.ok(!saysAs(words, `${words.toUpperCase()}!`), `${c.id}: ${words}`);
      }
    }
    for (const say of Object.values(NO_CAUSE)) {
      for (const words of renderings(say)) {
        assert.equal(verdictDiffersFromNoCause(words), undefined, words);
        assert.ok(!saysAs(words, reworded(words)), words);
      }
    }
    // The facts fill the placeholders, each of the row's choices of words is one; a missing fact is not, nor is a
    // verdict said with another cause's words or the slot left out where the row needs one.
    const held = CAUSES.find((c) => c.id === "forbid-held")!;
    const facts = { ...PLACEHOLDERS, when: "2026-11-25 03:00 UTC", job: "backup-1795572000", age: "2h 5m" };
    assert.equal(verdictDiffersFromRow("forbid-held", held.verdict(facts)), undefined);
    assert.equal(verdictDiffersFromRow("forbid-held", held.verdict({ ...facts, running: false })), undefined);
    assert.equal(verdictDiffersFromRow("forbid-held", held.verdict({ ...facts, pastDeadline: true })), undefined);
    assert.notEqual(verdictDiffersFromRow("forbid-held", held.verdict({ ...facts, job: "undefined" })), undefined);
    assert.notEqual(verdictDiffersFromRow("suspended", held.verdict(facts)), undefined);
    assert.notEqual(
      verdictDiffersFromRow("forbid-held", "concurrencyPolicy Forbid and Job backup-1 was still running"),
      undefined,
    );
    // A finding besides the verdict is the row's words without the slot; as the verdict, with it.
    const down = CAUSES.find((c) => c.id === "operator-down")!;
    const { when: _, ...noSlot } = PLACEHOLDERS;
    const summary = down.verdict(noSlot as typeof PLACEHOLDERS);
    assert.equal(verdictDiffersFromRow("operator-down", summary, "finding"), undefined);
    assert.notEqual(verdictDiffersFromRow("operator-down", summary, "verdict"), undefined);
    assert.equal(verdictDiffersFromRow("operator-down", down.verdict(facts)), undefined);
    assert.notEqual(verdictDiffersFromRow("operator-down", down.verdict(facts), "finding"), undefined);
  });

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

  it("the diagnosis (cmd/kubectl-cron/answer/why.ts and answer/why/) writes no verdict, finding or fix and rewrites no row's text", () => {
    const files = diagnosisFiles();
    for (const rel of files) {
      const src = read(rel);
      assert.doesNotMatch(src, /\.replace(All)?\(/, `${rel}: no text rewritten (a row's fix takes its names)`);
      assert.doesNotMatch(src, /\bcauseOf\(/, `${rel}: a fix through fixOf or found, never a row read directly`);
      assert.doesNotMatch(src, /\bfix:\s*\[\s*[^\]\s]/, `${rel}: no fix written out (only fix: [] when healthy)`);
      // A verdict or a finding's summary is a row's (verdictOf through found, finding; NO_CAUSE's), never written out:
      // no string that opens as one, no `verdict:` or `summary:` given words, no words handed to found().
      assert.doesNotMatch(
        src,
        /["'`](\$\{[^}]*\}\s*)?(did not run|will not run|ran at|started at|never runs|cannot tell|has had no slot|is due now|has not come|is not a time)\b/,
        `${rel}: no verdict's words`,
      );
      assert.doesNotMatch(src, /\b(verdict|summary):\s*["'`]/, `${rel}: no verdict or summary written out`);
      assert.doesNotMatch(src, /\bfound\(\s*"[^"]*",\s*["'`]/, `${rel}: found() takes facts, not words`);
    }
  });

  it("no string or template of the diagnosis says a sentence the table says, whole or a piece of it", () => {
    const texts = [...new Set(tableSentences().flatMap(fixedTexts))];
    // The table's sentences, rows' `next` among them, and the pieces they are found by.
    for (const c of CAUSES) {
      const sentences = [c.verdict(PLACEHOLDERS), ...("next" in c ? [c.next(PLACEHOLDERS)] : [])];
      for (const sentence of sentences) {
        assert.ok(fixedTexts(sentence).length > 0, `${c.id}: ${sentence} has words of its own`);
        for (const piece of fixedTexts(sentence)) assert.ok(texts.includes(piece), `${c.id}: ${piece}`);
      }
    }
    // The guard finds a next-slot sentence written out, each of those of the old nextBlocker() and groupBlocker().
    for (const line of WRITTEN_OUT_NEXT) assert.notDeepEqual(tableWordsIn(line, texts), [], line);
    assert.deepEqual(tableWordsIn("return `${CALENDAR_KIND} ${name} has no Pods`;", texts), [], "whole words only");
    const written = diagnosisFiles().flatMap((rel) => tableWordsIn(read(rel), texts).map((w) => `${rel}, ${w}`));
    assert.deepEqual(written, [], "the table's words, written out");
  });
});

/** The diagnosis's modules: cmd/kubectl-cron/answer/why.ts and answer/why/. */
function diagnosisFiles(): string[] {
  const dir = join(root, "cmd", "kubectl-cron", "answer", "why");
  const files = ["cmd/kubectl-cron/answer/why.ts", ...readdirSync(dir).map((f) => `cmd/kubectl-cron/answer/why/${f}`)];
  assert.ok(files.length > 5, "the diagnosis's modules");
  return files;
}
