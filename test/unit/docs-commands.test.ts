// Every command the docs give exists, as the README's did when it held them all: a `make` target is one of the
// Makefile's (and an OVERLAY one of config/'s directories), a `kubectl cron` command one the plugin's help lists,
// with flags that command takes (the plugin's own parser decides), and a whole example line parses as the plugin
// would parse it. The docs are README.md and docs/**/*.md but the generated API reference; what they say about
// make and CI in docs/development.md is checked by readme-make.test.ts, the runbooks' PromQL by runbooks.test.ts.
import assert from "node:assert/strict";
import { existsSync, readFileSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, it } from "node:test";
import { OPTIONS, parseCommandLine, USAGE, UsageError } from "../../cmd/kubectl-cron/model/args.ts";
import { docFiles, inlineCode, markdownLines, read } from "../markdown.ts";

const root = resolve(import.meta.dirname, "..", "..");

/** A command found in the docs, where it is, and whether it is a line of a code block. */
interface Found {
  where: string;
  text: string;
  codeLine: boolean;
}

/** A `kubectl cron` command: its words, and whether it is run as written (a command of its code line, not a mention). */
interface CronCommand extends Found {
  words: string[];
  asWritten: boolean;
}

/** The shell commands of every doc: code block lines without their comments, and inline code spans. */
function commands(): Found[] {
  const out: Found[] = [];
  for (const file of docFiles(root)) {
    const md = read(root, file);
    for (const l of markdownLines(md)) {
      if (!l.code) continue;
      const text = l.text.replace(/^\s*\$ /, "").replace(/(^|\s)#.*$/, "");
      if (text.trim()) out.push({ where: `${file}:${l.line}`, text, codeLine: true });
    }
    for (const c of inlineCode(md)) out.push({ where: `${file}:${c.line}`, text: c.text, codeLine: false });
  }
  return out;
}

/** Where a command ends: a `;`, `&&`, `||` or pipe outside parentheses (usage's `(NAME | -l SEL)` is one). */
function segment(text: string): string {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === "(") depth++;
    else if (c === ")") depth = Math.max(0, depth - 1);
    else if (depth === 0 && (c === ";" || c === "|" || (c === "&" && text[i + 1] === "&"))) return text.slice(0, i);
  }
  return text;
}

function makeTargets(): Set<string> {
  const makefile = readFileSync(join(root, "Makefile"), "utf8");
  return new Set([...makefile.matchAll(/^([a-z][a-z0-9-]*):(?!=)/gm)].map((m) => m[1]!));
}

/** `make` invocations: the targets and VAR=value arguments after each `make`. */
function makeInvocations(): Array<{ where: string; args: string[] }> {
  const out: Array<{ where: string; args: string[] }> = [];
  for (const c of commands()) {
    for (const m of c.text.matchAll(/(?<![\w./-])make((?: +(?:[a-z][a-z0-9-]*|[A-Z][A-Z0-9_]*=\S*))+)/g)) {
      out.push({ where: c.where, args: m[1]!.trim().split(/ +/) });
    }
  }
  return out;
}

/** The commands the plugin's help lists. */
const HELP_COMMANDS = new Set([...USAGE.matchAll(/^ {2}kubectl cron ([a-z-]+)/gm)].map((m) => m[1]!));

/** `kubectl cron` invocations: the words after `kubectl cron`, up to the end of the command. */
function cronInvocations(): CronCommand[] {
  const out: CronCommand[] = [];
  for (const c of commands()) {
    for (const m of c.text.matchAll(/(?<![\w-])kubectl cron (?=[a-z])/g)) {
      const words = segment(c.text.slice(m.index + m[0].length))
        .trim()
        .split(/\s+/)
        .filter(Boolean);
      const before = c.text.slice(0, m.index);
      const asWritten = c.codeLine && /^(\s*|.*(;|&&)\s*)$/.test(before);
      out.push({ ...c, text: c.text.slice(m.index), words, asWritten });
    }
  }
  return out;
}

/** The long name of a flag as written (`-l`, `--settle=15s`, `[--dry-run]`), or undefined if it is not one. */
function flagName(word: string): string | undefined {
  const w = word.replace(/^[[(]+|[\])]+$/g, "");
  const long = /^--([a-z][a-z-]*)(?:=.*)?$/.exec(w);
  if (long) return long[1];
  const short = /^-([a-zA-Z])$/.exec(w);
  if (!short) return undefined;
  const entry = Object.entries(OPTIONS).find(([, o]) => "short" in o && o.short === short[1]);
  return entry ? entry[0] : `-${short[1]} (no such short flag)`;
}

describe("the commands in README.md and docs/", () => {
  it("reads the docs: README.md and the pages under docs/, not the generated reference", () => {
    const files = docFiles(root);
    assert.ok(files.includes("README.md") && files.includes("docs/operating.md"), files.join(", "));
    assert.ok(!files.includes("docs/reference/api.md"));
    assert.ok(files.some((f) => f.startsWith("docs/runbooks/")));
  });

  it("every `make` command names targets of the Makefile (and an OVERLAY that exists)", () => {
    const targets = makeTargets();
    const found = makeInvocations();
    assert.ok(found.length >= 60, `only ${found.length} make commands found`);
    const bad: string[] = [];
    for (const { where, args } of found) {
      const named = args.filter((a) => !a.includes("="));
      if (named.length === 0) bad.push(`${where}: make ${args.join(" ")} names no target`);
      for (const t of named) if (!targets.has(t)) bad.push(`${where}: make ${t} is no target of the Makefile`);
      for (const a of args.filter((x) => x.startsWith("OVERLAY="))) {
        const dir = join(root, a.slice("OVERLAY=".length));
        if (!existsSync(dir) || !statSync(dir).isDirectory()) bad.push(`${where}: ${a}: no such directory`);
      }
    }
    assert.deepEqual(bad, []);
  });

  it("every `kubectl cron` command is one the plugin's help lists, and each is documented", () => {
    assert.ok(HELP_COMMANDS.size >= 9, [...HELP_COMMANDS].join(", "));
    const found = cronInvocations();
    assert.ok(found.length >= 40, `only ${found.length} kubectl cron commands found`);
    const bad = found
      .filter((f) => !HELP_COMMANDS.has(f.words[0]!))
      .map(
        (f) => `${f.where}: kubectl cron ${f.words[0]} is not in the plugin's help (${[...HELP_COMMANDS].join(", ")})`,
      );
    assert.deepEqual(bad, []);
    const used = new Set(found.map((f) => f.words[0]!));
    assert.deepEqual(
      [...HELP_COMMANDS].filter((c) => !used.has(c)),
      [],
      "commands of the plugin no doc mentions",
    );
  });

  it("every flag given to a `kubectl cron` command is one that command takes", () => {
    const bad: string[] = [];
    let flags = 0;
    for (const f of cronInvocations()) {
      const [command, ...rest] = f.words;
      for (const word of rest) {
        const name = flagName(word);
        if (name === undefined) continue;
        flags++;
        const option = (OPTIONS as Record<string, { type: string }>)[name];
        if (!option) {
          bad.push(`${f.where}: ${word}: the plugin has no such flag (kubectl cron ${command})`);
          continue;
        }
        // The plugin's parser refuses a flag given to a command it does not apply to; any other complaint (a
        // missing NAME, a value that does not parse) is about the made-up command line, not the flag.
        try {
          parseCommandLine([command!, `--${name}`, ...(option.type === "string" ? ["1"] : [])]);
        } catch (e) {
          if (!(e instanceof UsageError)) throw e;
          if (/does not apply to|Unknown option/i.test(e.message)) bad.push(`${f.where}: ${word}: ${e.message}`);
        }
      }
    }
    assert.ok(flags >= 25, `only ${flags} flags found`);
    assert.deepEqual(bad, []);
  });

  it("an example command in a code block (no [optional] or (a | b) parts) parses as the plugin parses it", () => {
    const bad: string[] = [];
    let lines = 0;
    for (const f of cronInvocations()) {
      if (!f.asWritten || /[[\]()|]|\.\.\./.test(f.words.join(" "))) continue;
      lines++;
      try {
        assert.notEqual(parseCommandLine(f.words), "help");
      } catch (e) {
        bad.push(`${f.where}: kubectl cron ${f.words.join(" ")}: ${e instanceof Error ? e.message : String(e)}`);
      }
    }
    assert.ok(lines >= 15, `only ${lines} example lines found`);
    assert.deepEqual(bad, []);
  });
});
