// How the manager starts and stops what it runs, without an apiserver: runnable groups, phases in start
// order and stopped in reverse, the shared shutdown deadline, the stop causes, and a Manager whose
// runnables fail or finish.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Client } from "../../../runtime/client.ts";
import { discardLogger } from "../../../runtime/log.ts";
import { Manager } from "../../../runtime/manager.ts";
import { Deadline, Phases, RunnableGroup, Stopper, type Runnable } from "../../../runtime/runnables.ts";

/** A runnable that logs its start and stop, and runs until its signal aborts (or fails with `fail`). */
function recorded(log: string[], name: string, o: { leader?: boolean; fail?: Promise<Error> } = {}): Runnable {
  return {
    name,
    needLeaderElection: o.leader ?? false,
    async start(signal) {
      log.push(`start ${name}`);
      const aborted = new Promise<void>((r) => signal.addEventListener("abort", () => r(), { once: true }));
      const failed = o.fail?.then((err) => Promise.reject(err));
      await Promise.race([aborted, ...(failed ? [failed] : [])]);
      log.push(`stop ${name}`);
    },
  };
}

describe("RunnableGroup", () => {
  it("starts every member with one signal, reports failures, and waits for all on stop", async () => {
    const log: string[] = [];
    const group = new RunnableGroup("g");
    let fail = (_: Error) => {};
    group.add(recorded(log, "a"));
    group.add(recorded(log, "b", { fail: new Promise<Error>((r) => (fail = r)) }));
    const errors: string[] = [];
    group.start((r, err) => errors.push(`${r.name}: ${(err as Error).message}`));
    group.start(() => assert.fail("a second start starts nothing"));
    assert.deepEqual(log, ["start a", "start b"]);
    fail(new Error("boom"));
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(errors, ["b: boom"]);
    group.stop();
    await group.done();
    assert.deepEqual(log, ["start a", "start b", "stop a"]);
  });

  it("does not start once stopped", async () => {
    const log: string[] = [];
    const group = new RunnableGroup("late");
    group.add(recorded(log, "a"));
    group.stop();
    group.start(() => {});
    await group.done();
    assert.deepEqual(log, []);
  });
});

describe("Phases", () => {
  it("stops in the reverse of the start order, each after the ones started later have stopped", async () => {
    const log: string[] = [];
    const phases = new Phases();
    for (const name of ["servers", "caches", "webhooks", "controllers"]) {
      await phases.start({
        name,
        start: () => void log.push(`start ${name}`),
        stop: async () => {
          await new Promise((r) => setTimeout(r, 5));
          log.push(`stop ${name}`);
        },
      });
    }
    await phases.stopAll(new Deadline(1000));
    assert.deepEqual(log, [
      "start servers",
      "start caches",
      "start webhooks",
      "start controllers",
      "stop controllers",
      "stop webhooks",
      "stop caches",
      "stop servers",
    ]);
    await phases.stopAll(new Deadline(1000));
    assert.equal(log.length, 8, "stopped once");
  });

  it("stops a phase whose start failed part-way", async () => {
    const log: string[] = [];
    const phases = new Phases();
    await assert.rejects(
      phases.start({
        name: "half",
        start: () => {
          throw new Error("no");
        },
        stop: () => void log.push("stop half"),
      }),
      /no/,
    );
    await phases.stopAll(new Deadline(10));
    assert.deepEqual(log, ["stop half"]);
  });
});

describe("Deadline", () => {
  it("is shared: work that outlives it is left, the miss is reported once, later waits end at once", async () => {
    let missed = 0;
    const deadline = new Deadline(50, () => missed++);
    assert.equal(await deadline.wait(Promise.resolve()), true);
    assert.equal(await deadline.wait(Promise.reject(new Error("settled is done"))), true);
    const t0 = performance.now();
    assert.equal(await deadline.wait(new Promise(() => {})), false);
    assert.ok(performance.now() - t0 >= 40);
    assert.equal(await deadline.wait(new Promise(() => {})), false);
    assert.equal(missed, 1);
  });
});

describe("Stopper", () => {
  it("stops on the caller's signal; a lease lost while stopping is not a loss", async () => {
    const ac = new AbortController();
    const stopper = new Stopper(ac.signal);
    assert.equal(stopper.stopping, false);
    ac.abort();
    await stopper.stopped();
    stopper.loseLease();
    assert.equal(stopper.leaseLost, false);
    assert.equal(stopper.failed, undefined);
  });

  it("stops on a lost lease", async () => {
    const stopper = new Stopper(new AbortController().signal);
    stopper.loseLease();
    await stopper.stopped();
    assert.equal(stopper.signal.aborted, true);
    assert.equal(stopper.leaseLost, true);
  });

  it("keeps the first failure, even one during shutdown", () => {
    const ac = new AbortController();
    const stopper = new Stopper(ac.signal);
    ac.abort();
    stopper.fail(new Error("first"));
    stopper.fail(new Error("second"));
    assert.equal((stopper.failed?.error as Error).message, "first");
  });

  it("lets go of the caller's signal on dispose", () => {
    const ac = new AbortController();
    const stopper = new Stopper(ac.signal);
    stopper.dispose();
    ac.abort();
    assert.equal(stopper.stopping, false);
  });
});

/** A kubeconfig for a Client that is never called: no informers, no leader election, no events. */
function fakeKubeConfig() {
  return {
    getCurrentCluster: () => ({ server: "https://127.0.0.1:1" }),
    applyToHTTPSOptions: async () => undefined,
  } as unknown as ConstructorParameters<typeof Client>[0];
}

describe("Manager runnables", () => {
  const manager = () => new Manager({ kubeConfig: fakeKubeConfig(), logger: discardLogger });

  it("starts every-replica runnables before leader-only ones and stops them in reverse", async () => {
    const log: string[] = [];
    const mgr = manager();
    mgr.add(recorded(log, "controller", { leader: true }));
    mgr.add(recorded(log, "webhook"));
    const stop = new AbortController();
    const running = mgr.start(stop.signal);
    await mgr.elected();
    assert.equal(mgr.isLeader(), true);
    assert.deepEqual(log, ["start webhook", "start controller"]);
    assert.throws(() => mgr.add(recorded(log, "late")), /added after the manager started/);
    stop.abort();
    await running;
    assert.deepEqual(log, ["start webhook", "start controller", "stop controller", "stop webhook"]);
    assert.equal(mgr.isLeader(), false);
  });

  it("stops everything when a runnable fails, and rejects with its error", async () => {
    const log: string[] = [];
    const mgr = manager();
    let fail = (_: Error) => {};
    mgr.add(recorded(log, "controller", { leader: true }));
    mgr.add(recorded(log, "webhook"));
    mgr.add(recorded(log, "provisioner", { fail: new Promise<Error>((r) => (fail = r)) }));
    const running = mgr.start(new AbortController().signal);
    await mgr.elected();
    fail(new Error("cannot write the Secret"));
    await assert.rejects(running, (err: Error) => {
      assert.equal(err.message, "provisioner: cannot write the Secret");
      assert.equal((err.cause as Error).message, "cannot write the Secret");
      return true;
    });
    assert.deepEqual(log.slice(3), ["stop controller", "stop webhook"]);
  });

  it("runs the shutdown hooks once, as stopping begins, before any runnable stops (a failing hook is logged)", async () => {
    const log: string[] = [];
    const mgr = manager();
    mgr.add(recorded(log, "webhook"));
    mgr.onShutdown(() => log.push("hook: drain"));
    mgr.onShutdown(() => {
      throw new Error("broken hook");
    });
    mgr.onShutdown(() => log.push("hook: after the broken one"));
    const stop = new AbortController();
    const running = mgr.start(stop.signal);
    await mgr.elected();
    assert.deepEqual(log, ["start webhook"]);
    stop.abort();
    await running;
    assert.deepEqual(log.slice(0, 3), ["start webhook", "hook: drain", "hook: after the broken one"]);
    assert.equal(log.filter((l) => l.startsWith("hook: drain")).length, 1);
    assert.ok(log.indexOf("hook: drain") < log.findIndex((l) => l.startsWith("stop")), log.join(", "));
  });

  it("does not wait past the grace period for a runnable that ignores its signal", async () => {
    const mgr = new Manager({ kubeConfig: fakeKubeConfig(), logger: discardLogger, gracefulShutdownTimeoutMs: 100 });
    mgr.add({ name: "stuck", needLeaderElection: true, start: () => new Promise(() => {}) });
    const stop = new AbortController();
    const running = mgr.start(stop.signal);
    await mgr.elected();
    const t0 = performance.now();
    stop.abort();
    await running;
    const took = performance.now() - t0;
    assert.ok(took >= 90 && took < 2_000, `stopped after ${Math.round(took)} ms`);
  });
});
