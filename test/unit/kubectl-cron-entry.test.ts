// The plugin's entry points, each run as a process of its own (as the launcher runs cli.ts), with no cluster: the
// kubeconfig does not exist. cli.ts is the one entry point; main.ts, which cli.ts imports, only names it (issue 55:
// run directly, main.ts awaited cli.ts while cli.ts imported main.ts, and exited 13 having done nothing). A file of
// cmd/kubectl-cron/ that gains an entry block (`import.meta.main`) fails the first test until it is run here too.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { after, describe, it } from "node:test";
import { USAGE } from "../../cmd/kubectl-cron/model/args.ts";
import { EXIT } from "../../cmd/kubectl-cron/main.ts";

const plugin = resolve(import.meta.dirname, "..", "..", "cmd", "kubectl-cron");
const home = mkdtempSync(join(tmpdir(), "kubectl-cron-entry-"));
const kubeconfig = join(home, "none");
after(() => rmSync(home, { recursive: true, force: true }));

/** The files under cmd/kubectl-cron/ that run when Node is started on them. */
function entryPoints(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return entryPoints(p);
    return e.name.endsWith(".ts") && /\bimport\.meta\.main\b/.test(readFileSync(p, "utf8")) ? [p] : [];
  });
}

function runFile(file: string, args: string[]) {
  const r = spawnSync(process.execPath, ["--no-warnings=ExperimentalWarning", join(plugin, file), ...args], {
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, KUBECONFIG: kubeconfig },
    encoding: "utf8",
    timeout: 30_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe("the plugin's entry points, run as processes", () => {
  it("are cli.ts and main.ts (which refuses), each tested below", () => {
    assert.deepEqual(
      entryPoints(plugin).map((f) => relative(plugin, f)),
      ["cli.ts", "main.ts"],
    );
  });

  it("cli.ts --help prints the usage and exits 0", () => {
    assert.deepEqual(runFile("cli.ts", ["--help"]), { code: EXIT.ok, stdout: USAGE, stderr: "" });
  });

  it("cli.ts with an unknown command exits 2 (usage) and points at --help", () => {
    const r = runFile("cli.ts", ["bogus"]);
    assert.equal(r.code, EXIT.usage, r.stderr);
    assert.match(r.stderr, /^error: unknown command "bogus".*\nRun 'kubectl cron --help' for usage\.\n$/);
  });

  // A command that needs the cluster imports main.ts: the import that never settled while main.ts started cli.ts.
  it("cli.ts resume NAME without a kubeconfig says so and exits 1, not 13", () => {
    const r = runFile("cli.ts", ["resume", "nightly"]);
    assert.equal(r.code, EXIT.failed, r.stderr);
    assert.equal(r.stdout, "");
    assert.ok(r.stderr.startsWith(`error: cannot read the kubeconfig (KUBECONFIG=${kubeconfig})`), r.stderr);
  });

  it("main.ts run directly does nothing but name the entry point, and exits 2 (usage), not 0 or 13", () => {
    const r = runFile("main.ts", ["resume", "nightly"]);
    assert.deepEqual(r, {
      code: EXIT.usage,
      stdout: "",
      stderr: "error: cmd/kubectl-cron/main.ts is not an entry point: run cmd/kubectl-cron/cli.ts\n",
    });
  });
});
