// runtime/exit.ts: once quiesced, the process posts no Maglev compile job and no concurrent Sparkplug batch (what
// Node 24's exit can deadlock on: nodejs/node#54918), and exits with the code it was given. Read from V8's own
// trace (--trace-opt) of a child that makes functions hot before and after.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { describe, it } from "node:test";
import { pathToFileURL } from "node:url";
import { join } from "node:path";

const EXIT = pathToFileURL(join(import.meta.dirname, "..", "..", "..", "runtime", "exit.ts")).href;

/** A child that runs hot code for `ms`, prints a marker, quiesces, runs other hot code, and exits with 3. */
function child(quiesce: boolean, ms = 600) {
  const script = `
    const { exitProcess, quiesceBackgroundCompilers } = await import(${JSON.stringify(EXIT)});
    const hot = (n) => { let s = 0; for (let i = 0; i < n; i++) s += (i * 7) % 13; return s; };
    let t = 0;
    for (const end = Date.now() + ${ms}; Date.now() < end; ) t += hot(1000);
    console.log("MARK");
    if (${quiesce}) quiesceBackgroundCompilers();
    const later = (o) => o.a + o.b * 2 + [o.a, o.b].map((v) => v * 3).reduce((a, b) => a + b, 0);
    for (const end = Date.now() + ${ms}; Date.now() < end; ) t += later({ a: 1, b: t % 5 }) + hot(300);
    exitProcess(t > 0 ? 3 : 4);
  `;
  return spawnSync(process.execPath, ["--trace-opt", "--input-type=module", "-e", script], {
    encoding: "utf8",
    timeout: 30_000,
  });
}

const maglevAfterMark = (stdout: string) =>
  stdout
    .slice(stdout.indexOf("MARK"))
    .split("\n")
    .filter((l) => /MAGLEV/i.test(l));

describe("runtime/exit.ts", { timeout: 60_000 }, () => {
  it("posts no Maglev compile once quiesced, and exits with the code given", () => {
    const r = child(true);
    assert.equal(r.status, 3, r.stderr);
    assert.ok(r.stdout.includes("MARK"), r.stdout.slice(0, 500));
    assert.deepEqual(maglevAfterMark(r.stdout), []);
  });

  it("a process that does not quiesce keeps compiling with Maglev (the trace sees it)", () => {
    const r = child(false);
    assert.equal(r.status, 3, r.stderr);
    assert.ok(maglevAfterMark(r.stdout).length > 0, "V8 traced no Maglev compile: the check above would prove nothing");
  });
});
