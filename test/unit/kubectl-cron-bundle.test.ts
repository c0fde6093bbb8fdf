// The plugin built ahead of time (hack/build-plugin.ts, make plugin / make plugin-sea): what it loads for the
// commands that need no cluster, the launcher's choice between the bundle and the TypeScript, and the single
// files run from a directory outside the clone, as a user without one runs them. No timings here: bench/plugin.ts
// measures them.
import assert from "node:assert/strict";
import { execFileSync, spawn, spawnSync } from "node:child_process";
import {
  chmodSync,
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { once } from "node:events";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { after, before, describe, it } from "node:test";
import { API_VERSION, KIND } from "../../api/v1/index.ts";
import { run } from "../../cmd/kubectl-cron/cli.ts";
import { main } from "../../cmd/kubectl-cron/main.ts";
import type { KubeObject } from "../../runtime/kinds.ts";
import { FakeAPIServer } from "../fake-apiserver.ts";
import { recorded } from "../fixtures/builtin-v1/index.ts";

const root = resolve(import.meta.dirname, "..", "..");

async function capture(f: typeof main, argv: string[]) {
  let stdout = "";
  let stderr = "";
  const code = await f(argv, { stdout: (s) => (stdout += s), stderr: (s) => (stderr += s), env: {} });
  return { code, stdout, stderr };
}

/** Runs a command with a PATH that has only dir and the system's directories, from dir, with no kubeconfig. */
function runIn(dir: string, cmd: string, args: string[]) {
  const r = spawnSync(cmd, args, {
    cwd: dir,
    env: { PATH: `${dir}:/usr/local/bin:/usr/bin:/bin`, HOME: dir, KUBECONFIG: join(dir, "none") },
    encoding: "utf8",
    timeout: 30_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe("kubectl cron's entry point (cli.ts)", () => {
  for (const argv of [
    ["--help"],
    ["why", "--help"],
    ["bogus"],
    ["next"],
    ["run", "a", "b"],
    ["--output=xml", "list"],
  ]) {
    it(`answers ${JSON.stringify(argv)} as main() does`, async () => {
      assert.deepEqual(await capture(run, argv), await capture(main, argv));
    });
  }

  it("loads neither the client, zod, yaml, prom-client nor the API types for --help, a usage error or __complete", () => {
    const script = `
      import { registerHooks } from "node:module";
      const seen = [];
      registerHooks({ resolve(spec, ctx, next) { const r = next(spec, ctx); seen.push(r.url); return r; } });
      const { run } = await import(${JSON.stringify(join(root, "cmd/kubectl-cron/cli.ts"))});
      const io = { stdout: () => {}, stderr: () => {}, env: { KUBECONFIG: "/nonexistent" } };
      await run(["--help"], io);
      await run(["bogus"], io);
      await run(["__complete", "w"], io);
      await run(["__complete", "why", "--"], io);
      console.log(JSON.stringify(seen));`;
    const out = execFileSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" });
    const loaded = (JSON.parse(out) as string[]).filter((u) => !u.startsWith("node:"));
    const heavy = loaded.filter((u) => /node_modules|\/api\/|runtime\/client\.ts|\/main\.ts$/.test(u));
    assert.deepEqual(heavy, []);
    assert.ok(loaded.some((u) => u.endsWith("/completion.ts")));
  });

  // The dashboard (its server, informers, marks and the page's assets) loads only for `kubectl cron dashboard`:
  // main.ts imports it on demand. The commands run to their end against a stand-in API server on loopback that
  // answers every list with an empty one and a named CronJob with NotFound.
  it("loads none of cmd/kubectl-cron/dashboard/ for --help, why and list; the dashboard command does", () => {
    const script = `
      import { registerHooks } from "node:module";
      import { createServer } from "node:http";
      import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
      import { once } from "node:events";
import { tmpdir } from "node:os";
      import { join } from "node:path";
      const seen = [];
      registerHooks({ resolve(spec, ctx, next) { const r = next(spec, ctx); seen.push(r.url); return r; } });
      const server = createServer((req, res) => {
        const named = /\\/cronjobs\\/[^/?]+(\\?|$)/.test(req.url);
        res.writeHead(named ? 404 : 200, { "Content-Type": "application/json" });
        res.end(JSON.stringify(named
          ? { kind: "Status", apiVersion: "v1", status: "Failure", reason: "NotFound", code: 404, message: "not found" }
          : { kind: "List", apiVersion: "v1", metadata: { resourceVersion: "1" }, items: [] }));
      });
      await new Promise((r) => server.listen(0, "127.0.0.1", r));
      const dir = mkdtempSync(join(tmpdir(), "kubectl-cron-lazy-"));
      const kubeconfig = join(dir, "config");
      writeFileSync(kubeconfig, JSON.stringify({
        apiVersion: "v1", kind: "Config", "current-context": "c",
        clusters: [{ name: "c", cluster: { server: "http://127.0.0.1:" + server.address().port } }],
        contexts: [{ name: "c", context: { cluster: "c", user: "u", namespace: "default" } }],
        users: [{ name: "u", user: { token: "t" } }],
      }));
      const { run } = await import(${JSON.stringify(join(root, "cmd/kubectl-cron/cli.ts"))});
      const codes = [];
      for (const argv of [["--help"], ["why", "-A"], ["why", "nightly"], ["list", "-A"], ["list"]]) {
        codes.push(await run(argv, { stdout: () => {}, stderr: () => {}, env: { KUBECONFIG: kubeconfig } }));
      }
      server.close();
      rmSync(dir, { recursive: true, force: true });
      const commands = [...seen];
      // The control: the hook sees the dashboard's modules when they are loaded.
      await import(${JSON.stringify(join(root, "cmd/kubectl-cron/dashboard/command.ts"))});
      console.log(JSON.stringify({ codes, commands, control: seen.slice(commands.length) }));`;
    const out = execFileSync(process.execPath, ["--no-warnings", "--input-type=module", "-e", script], {
      encoding: "utf8",
      timeout: 60_000,
    });
    const { codes, commands, control } = JSON.parse(out) as { codes: number[]; commands: string[]; control: string[] };
    const dashboard = (urls: string[]) => urls.filter((u) => u.includes("/cmd/kubectl-cron/dashboard/"));
    // Each ran as a command against the stand-in: usage, nothing to explain, not found, nothing to list.
    assert.deepEqual(codes, [0, 0, 1, 0, 0]);
    assert.ok(
      commands.some((u) => u.endsWith("/whycommand.ts")),
      "why's modules were loaded",
    );
    assert.deepEqual(dashboard(commands), []);
    assert.ok(dashboard(control).some((u) => u.endsWith("/dashboard/command.ts")));
    assert.ok(dashboard(control).some((u) => u.endsWith("/dashboard/source.ts")));
  });
});

/**
 * The V8 flags every form of the plugin runs with: no compile job off the main thread, where Node 24's process.exit
 * can deadlock with one waiting for a collection (nodejs/node#54918, #64274; a command that had answered never exited).
 */
const EXIT_SAFE = ["--no-maglev", "--no-concurrent-sparkplug"];
/** A fake entry's words: its arguments, and whether it runs with EXIT_SAFE. */
const SAYS_ARGS_AND_FLAGS = `process.argv.slice(2).join(" "), ${JSON.stringify(EXIT_SAFE)}.every((f) => process.execArgv.includes(f)) ? "exit-safe" : "exit-unsafe"`;

describe("the launcher cmd/kubectl-cron/kubectl-cron", () => {
  let fake: string;
  before(() => {
    // A clone in miniature: the launcher, a node, a bundle that says so, and the TypeScript entry that says so.
    fake = mkdtempSync(join(tmpdir(), "kubectl-cron-launcher-"));
    mkdirSync(join(fake, "cmd/kubectl-cron/model"), { recursive: true });
    mkdirSync(join(fake, "node_modules/.bin"), { recursive: true });
    mkdirSync(join(fake, "bin/plugin"), { recursive: true });
    copyFileSync(join(root, "cmd/kubectl-cron/kubectl-cron"), join(fake, "cmd/kubectl-cron/kubectl-cron"));
    chmodSync(join(fake, "cmd/kubectl-cron/kubectl-cron"), 0o755);
    symlinkSync(process.execPath, join(fake, "node_modules/.bin/node"));
    writeFileSync(join(fake, "cmd/kubectl-cron/cli.ts"), `console.log("typescript", ${SAYS_ARGS_AND_FLAGS});\n`);
    writeFileSync(join(fake, "cmd/kubectl-cron/model/args.ts"), "\n");
    writeFileSync(join(fake, "package-lock.json"), "{}\n");
    writeFileSync(join(fake, "bin/plugin/kubectl-cron.mjs"), `console.log("bundle", ${SAYS_ARGS_AND_FLAGS});\n`);
    writeFileSync(
      join(fake, "bin/plugin/inputs"),
      "package-lock.json\ncmd/kubectl-cron/model/args.ts\ncmd/kubectl-cron/cli.ts\n",
    );
    const old = new Date(Date.now() - 60_000);
    for (const f of ["cmd/kubectl-cron/cli.ts", "cmd/kubectl-cron/model/args.ts", "package-lock.json"]) {
      utimesSync(join(fake, f), old, old);
    }
  });
  after(() => rmSync(fake, { recursive: true, force: true }));
  const launch = () => runIn(fake, join(fake, "cmd/kubectl-cron/kubectl-cron"), ["next", "x"]).stdout.trim();

  // Either way with no compile job off the main thread (EXIT_SAFE).
  it("runs the bundle while none of its sources is newer", () => {
    assert.equal(launch(), "bundle next x exit-safe");
  });

  it("runs the TypeScript when a source is newer than the bundle, and when there is no bundle", () => {
    const now = new Date(Date.now() + 5_000);
    utimesSync(join(fake, "cmd/kubectl-cron/model/args.ts"), now, now);
    assert.equal(launch(), "typescript next x exit-safe");
    rmSync(join(fake, "bin/plugin"), { recursive: true });
    assert.equal(launch(), "typescript next x exit-safe");
  });
});

describe("the single files, outside the clone (make plugin, make plugin-sea)", () => {
  let out: string;
  let away: string;
  before(() => {
    out = mkdtempSync(join(tmpdir(), "kubectl-cron-build-"));
    away = mkdtempSync(join(tmpdir(), "kubectl-cron-user-"));
    execFileSync(process.execPath, [join(root, "hack/build-plugin.ts"), "bundle", "sea", "--out-dir", out], {
      stdio: "pipe",
    });
    copyFileSync(join(out, "kubectl-cron"), join(away, "kubectl-cron"));
    chmodSync(join(away, "kubectl-cron"), 0o755);
    copyFileSync(join(out, "kubectl-cron.mjs"), join(away, "kubectl-cron.mjs"));
  });
  after(() => {
    rmSync(out, { recursive: true, force: true });
    rmSync(away, { recursive: true, force: true });
  });

  // The split bundle (bin/plugin/, what the launcher runs): the files Node loads for a command, found by a resolve
  // hook; none of them may hold the dashboard's code or its page (the page's script and style included: a `define`
  // of an object would become a module of the chunk every command loads).
  it("the split bundle loads none of the dashboard's code or page for --help, why and list", () => {
    const dir = join(out, "plugin");
    const chunks = readdirSync(dir).filter((f) => f.endsWith(".mjs"));
    const DASHBOARD = ["Serving the dashboard of", "filter by name", ".legend-item"];
    const holding = (f: string) => DASHBOARD.filter((w) => readFileSync(join(dir, f), "utf8").includes(w));
    // The words are in the bundle (else the check below would prove nothing): in chunks of the dashboard's own.
    assert.deepEqual(
      DASHBOARD.filter((w) => !chunks.some((f) => holding(f).includes(w))),
      [],
    );
    const hook = join(out, "hook.mjs");
    writeFileSync(
      hook,
      `import { registerHooks } from "node:module"; import { appendFileSync } from "node:fs";
       registerHooks({ resolve(spec, ctx, next) { const r = next(spec, ctx);
         if (r.url.startsWith("file:")) appendFileSync(process.env.SEEN, r.url + "\\n"); return r; } });`,
    );
    for (const argv of [["--help"], ["why", "-A"], ["list", "-A"], ["why", "nightly"]]) {
      const seen = join(out, "seen");
      rmSync(seen, { force: true });
      spawnSync(process.execPath, ["--import", hook, join(dir, "kubectl-cron.mjs"), ...argv], {
        env: { PATH: "/usr/bin:/bin", HOME: out, KUBECONFIG: join(out, "none"), SEEN: seen },
        encoding: "utf8",
        timeout: 30_000,
      });
      const loaded = readFileSync(seen, "utf8")
        .trim()
        .split("\n")
        .map((u) => u.slice(u.lastIndexOf("/") + 1))
        .filter((f) => chunks.includes(f));
      assert.ok(loaded.length > 1, `${argv.join(" ")}: ${loaded.join(", ")}`);
      assert.deepEqual(
        loaded.flatMap((f) => holding(f).map((w) => `${f}: ${w}`)),
        [],
        argv.join(" "),
      );
    }
  });

  // A first Intl.DateTimeFormat pages in ICU's date data, ~8 MB of RSS (issue 72): the built plugin makes none for a
  // UTC schedule (api/v1/schedule/timezone.ts and wallclock.ts; luxon's locale, hack/build-plugin.ts).
  it("the split bundle makes no Intl.DateTimeFormat for the next runs of a UTC schedule, and reads another zone's", async () => {
    const server = await new FakeAPIServer({ discovery: recorded().discovery, notFound: recorded().notFound }).start(
      "prod",
    );
    try {
      await server.seed({
        apiVersion: API_VERSION,
        kind: KIND,
        metadata: { name: "hourly", namespace: "prod" },
        spec: { schedule: "0 * * * *", jobTemplate: { spec: { template: { spec: { containers: [] } } } } },
      } as KubeObject);
      await server.seed({
        apiVersion: API_VERSION,
        kind: KIND,
        metadata: { name: "berlin", namespace: "prod" },
        spec: {
          schedule: "30 2 * * *",
          timeZone: "Europe/Berlin",
          jobTemplate: { spec: { template: { spec: { containers: [] } } } },
        },
      } as KubeObject);
      const counter = join(out, "count-date-formats.cjs");
      const made = join(out, "date-formats-made");
      writeFileSync(
        counter,
        `const made = [];
         const count = () => made.push(new Error().stack.split("\\n").slice(2, 5).join(" <- "));
         Intl.DateTimeFormat = new Proxy(Intl.DateTimeFormat, {
           construct(t, a, n) { count(); return Reflect.construct(t, a, n); },
           apply(t, self, a) { count(); return Reflect.apply(t, self, a); },
         });
         process.on("exit", () => require("node:fs").writeFileSync(process.env.MADE, made.join("\\n")));`,
      );
      const next = async (name: string) => {
        const child = spawn(
          process.execPath,
          ["--require", counter, join(out, "plugin", "kubectl-cron.mjs"), "next", name],
          {
            env: { PATH: "/usr/bin:/bin", HOME: out, MADE: made, KUBECONFIG: server.kubeconfigPath },
            stdio: ["ignore", "pipe", "pipe"],
          },
        );
        let stdout = "";
        let stderr = "";
        child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
        child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
        const [code] = (await once(child, "exit")) as [number | null];
        assert.equal(code, 0, stderr);
        return { stdout, made: readFileSync(made, "utf8") };
      };
      const utc = await next("hourly");
      assert.match(utc.stdout, /:00:00Z/);
      assert.equal(utc.made, "", "Intl.DateTimeFormat made at");
      // Another zone's offsets come from date-fns-tz, which the bundle requires then (and ICU's data with it).
      const berlin = await next("berlin");
      assert.match(berlin.stdout, /Europe\/Berlin/);
      assert.notEqual(berlin.made, "");
    } finally {
      await server.stop();
    }
  });

  it("the one-file bundle's #! line and the executable's execArgv carry EXIT_SAFE", () => {
    const shebang = readFileSync(join(away, "kubectl-cron.mjs"), "utf8").split("\n", 1)[0];
    assert.equal(shebang, `#!/usr/bin/env -S node ${EXIT_SAFE.join(" ")}`);
    // The executable's blob holds its execArgv as written (Node's own binary holds no such string).
    const exe = readFileSync(join(away, "kubectl-cron"));
    for (const f of EXIT_SAFE) assert.ok(exe.includes(f), `the executable's execArgv lacks ${f}`);
  });

  const cases = [
    { name: "the single executable", cmd: () => join(away, "kubectl-cron"), pre: [] as string[] },
    { name: "the one-file bundle on Node 24", cmd: () => process.execPath, pre: ["kubectl-cron.mjs"] },
  ];
  for (const c of cases) {
    it(`${c.name}: --help, a usage error and __complete`, () => {
      const help = runIn(away, c.cmd(), [...c.pre, "--help"]);
      assert.equal(help.code, 0, help.stderr);
      assert.match(help.stdout, /^kubectl cron: /);
      const usage = runIn(away, c.cmd(), [...c.pre, "bogus"]);
      assert.equal(usage.code, 2);
      assert.match(usage.stderr, /^error: unknown command "bogus"/);
      const complete = runIn(away, c.cmd(), [...c.pre, "__complete", "w"]);
      assert.equal(complete.code, 0);
      assert.match(complete.stdout, /^why\t.*\n:4\n$/);
      // A command that needs the cluster gets as far as the kubeconfig: every module it needs is inside.
      const list = runIn(away, c.cmd(), [...c.pre, "list"]);
      assert.equal(list.code, 1);
      assert.match(list.stderr, /^error: cannot read the kubeconfig/);
      // The dashboard's modules load (the CommonJS of the executable has no import.meta) and it reaches for the
      // cluster: nothing listens at port 1.
      const unreachable = join(away, "unreachable.kubeconfig");
      writeFileSync(
        unreachable,
        JSON.stringify({
          apiVersion: "v1",
          kind: "Config",
          clusters: [{ name: "c", cluster: { server: "https://127.0.0.1:1" } }],
          users: [{ name: "u", user: { token: "t" } }],
          contexts: [{ name: "c", context: { cluster: "c", user: "u" } }],
          "current-context": "c",
        }),
      );
      const dashboard = runIn(away, c.cmd(), [...c.pre, "dashboard", "--kubeconfig", unreachable]);
      assert.equal(dashboard.code, 1, dashboard.stderr);
      assert.match(dashboard.stderr, /^error: .*ECONNREFUSED 127\.0\.0\.1:1/);
    });
  }

  it("kubectl finds the single executable on the PATH as `kubectl cron`", (t) => {
    if (spawnSync("kubectl", ["version", "--client"]).status !== 0) return t.skip("no kubectl");
    const r = runIn(away, "kubectl", ["cron", "--help"]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^kubectl cron: /);
  });
});
