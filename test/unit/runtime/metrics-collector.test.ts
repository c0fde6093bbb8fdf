// runtime/metrics/collector.ts: a ScrapeTimeMetric renders exactly as prom-client renders the same series,
// writeMetrics writes exactly what Registry.metrics() returns (in pieces, the large metric in several), and
// nothing is kept between scrapes.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Counter, Gauge, Registry } from "prom-client";
import { type Sample, ScrapeTimeMetric, writeMetrics } from "../../../runtime/metrics/collector.ts";

const TRICKY: Sample[] = [
  { labels: { namespace: "a", name: 'quote " and \\ backslash' }, value: 1 },
  { labels: { namespace: "b", name: "new\nline" }, value: 0.25 },
  { labels: { namespace: "c", name: "inf" }, value: Infinity },
  { labels: { namespace: "d", name: "-inf" }, value: -Infinity },
  { labels: { namespace: "e", name: "nan" }, value: NaN },
  { labels: {}, value: 7 },
];

/** The same series through prom-client's own Gauge, in a registry of their own. */
async function promClientText(samples: Sample[], name: string, help: string): Promise<string> {
  const r = new Registry();
  const g = new Gauge({ name, help, labelNames: ["namespace", "name"], registers: [r] });
  for (const s of samples) g.set(s.labels as Record<string, string>, s.value);
  return r.metrics();
}

async function written(r: Registry): Promise<{ text: string; pieces: number }> {
  let text = "";
  let pieces = 0;
  await writeMetrics(r, async (chunk) => {
    text += chunk;
    pieces++;
    await Promise.resolve();
  });
  return { text, pieces };
}

describe("scrape-time metrics (runtime/metrics/collector.ts)", () => {
  it("render like prom-client's metrics of the same series, escaping and odd values included", async () => {
    const r = new Registry();
    new ScrapeTimeMetric({
      name: "x_info",
      help: "help with \\ and\nnewline",
      type: "gauge",
      collect: () => TRICKY,
    }).register(r);
    const want = await promClientText(TRICKY, "x_info", "help with \\ and\nnewline");
    assert.equal(await r.metrics(), want, "through Registry.metrics()");
    assert.equal((await written(r)).text, want, "through writeMetrics");
  });

  it("writeMetrics writes what Registry.metrics() returns, a large metric in pieces", async () => {
    const r = new Registry();
    const c = new Counter({ name: "a_total", help: "a counter", labelNames: ["k"], registers: [r] });
    c.inc({ k: "v" }, 3);
    const many = function* (): Generator<Sample> {
      for (let i = 0; i < 20_000; i++) yield { labels: { namespace: `ns-${i % 4}`, cronjob: `cj-${i}` }, value: i };
    };
    new ScrapeTimeMetric({ name: "b_seconds", help: "many", type: "gauge", collect: many }).register(r);
    new ScrapeTimeMetric({ name: "c_total", help: "none yet", type: "counter", collect: () => [] }).register(r);
    new Gauge({ name: "d", help: "after", registers: [r] }).set(1);
    const { text, pieces } = await written(r);
    assert.equal(text, await r.metrics());
    assert.ok(pieces > 10, `written in pieces: ${pieces}`);
    assert.match(text, /\nb_seconds\{namespace="ns-3",cronjob="cj-19999"\} 19999\n/);
  });

  it("keeps nothing: every scrape asks collect again", async () => {
    const r = new Registry();
    let value = 1;
    let calls = 0;
    const collect = () => {
      calls++;
      return [{ labels: { k: "v" }, value }];
    };
    new ScrapeTimeMetric({ name: "g", help: "h", type: "gauge", collect }).register(r);
    assert.match(await r.metrics(), /g\{k="v"\} 1/);
    value = 2;
    assert.match((await written(r)).text, /g\{k="v"\} 2/);
    assert.equal(calls, 2);
  });

  it("a registry that renders otherwise (default labels) is written as Registry.metrics() renders it", async () => {
    const r = new Registry();
    r.setDefaultLabels({ pod: "p-1" });
    new ScrapeTimeMetric({
      name: "g",
      help: "h",
      type: "gauge",
      collect: () => [{ labels: { k: "v" }, value: 1 }],
    }).register(r);
    const { text } = await written(r);
    assert.equal(text, await r.metrics());
    assert.match(text, /g\{k="v",pod="p-1"\} 1/);
  });
});

/** `r` behind a Proxy that records and refuses every read of an `_`-prefixed member (prom-client's private fields). */
function guarded(r: Registry): { registry: Registry; privateReads: string[] } {
  const privateReads: string[] = [];
  const registry = new Proxy(r, {
    get(target, prop) {
      if (typeof prop === "string" && prop.startsWith("_")) {
        privateReads.push(prop);
        throw new Error(`private member ${prop} read`);
      }
      const v: unknown = Reflect.get(target, prop, target);
      // The registry's own methods run on the registry itself: only reads from outside are guarded.
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
  return { registry, privateReads };
}

/** Many series, of `n` CronJobs. */
const series = (n: number) =>
  function* (): Generator<Sample> {
    for (let i = 0; i < n; i++) yield { labels: { namespace: `ns-${i % 4}`, cronjob: `cj-${i}` }, value: i };
  };

describe("scrape-time metrics through prom-client's public API only", () => {
  for (const defaults of [false, true]) {
    it(`render the same bytes when the registry's private members cannot be read${defaults ? " (default labels)" : ""}`, async () => {
      const r = new Registry();
      const { registry, privateReads } = guarded(r);
      if (defaults) registry.setDefaultLabels({ pod: "p-1" });
      new Counter({ name: "a_total", help: "a counter", labelNames: ["k"], registers: [registry] }).inc({ k: "v" }, 3);
      new ScrapeTimeMetric({ name: "b_seconds", help: "many", type: "gauge", collect: series(5_000) }).register(
        registry,
      );
      new ScrapeTimeMetric({ name: "c_total", help: "tricky", type: "counter", collect: () => TRICKY }).register(
        registry,
      );
      const gone = new ScrapeTimeMetric({ name: "d", help: "unregistered", type: "gauge", collect: () => TRICKY });
      gone.register(registry);
      gone.unregister(registry);

      const { text, pieces } = await written(registry);
      assert.deepEqual(privateReads, []);
      assert.equal(text, await r.metrics());
      assert.ok(pieces > 5, `written in pieces: ${pieces}`);
      assert.doesNotMatch(text, /^# HELP d /m);
      assert.match(
        text,
        defaults
          ? /\nb_seconds\{namespace="ns-3",cronjob="cj-4999",pod="p-1"\} 4999\n/
          : /\nb_seconds\{namespace="ns-3",cronjob="cj-4999"\} 4999\n/,
      );
    });
  }

  it("with default labels, write a large metric in pieces as Registry.metrics() renders it, a series' own label first", async () => {
    const r = new Registry();
    r.setDefaultLabels({ pod: "p-1", zone: "z" });
    new ScrapeTimeMetric({ name: "b_seconds", help: "many", type: "gauge", collect: series(20_000) }).register(r);
    new ScrapeTimeMetric({
      name: "c_total",
      help: "own pod",
      type: "counter",
      collect: (): Sample[] => [
        { labels: { pod: "own", k: "v" }, value: 1 },
        { labels: {}, value: 2 },
      ],
    }).register(r);
    new ScrapeTimeMetric({ name: "e", help: "none", type: "gauge", collect: () => [] }).register(r);
    const { text, pieces } = await written(r);
    assert.equal(text, await r.metrics());
    assert.ok(pieces > 10, `written in pieces: ${pieces}`);
    assert.match(text, /\nc_total\{pod="own",k="v",zone="z"\} 1\nc_total\{pod="p-1",zone="z"\} 2\n/);
    assert.match(text, /\n# HELP e none\n# TYPE e gauge\n$/);
    assert.equal(text.match(/^# HELP b_seconds /gm)?.length, 1, "HELP written once");
  });

  for (const defaults of [false, true]) {
    it(`scrapes at the same time each render every series once${defaults ? " (default labels)" : ""}`, async () => {
      const r = new Registry();
      if (defaults) r.setDefaultLabels({ pod: "p-1" });
      new ScrapeTimeMetric({ name: "b_seconds", help: "many", type: "gauge", collect: series(3_000) }).register(r);
      new ScrapeTimeMetric({ name: "c", help: "few", type: "gauge", collect: series(3) }).register(r);
      const want = await r.metrics();
      const [a, b, c] = await Promise.all([written(r), written(r), r.metrics()]);
      assert.equal(a.text, want);
      assert.equal(b.text, want);
      assert.equal(c, want);
    });
  }

  it("leave out a metric removed while the scrape is written, and go on", async () => {
    const r = new Registry();
    new ScrapeTimeMetric({ name: "b_seconds", help: "many", type: "gauge", collect: series(5_000) }).register(r);
    const late = new ScrapeTimeMetric({ name: "c", help: "removed", type: "gauge", collect: series(3) });
    late.register(r);
    new Gauge({ name: "d", help: "removed too", registers: [r] }).set(1);
    new Gauge({ name: "e", help: "kept", registers: [r] }).set(2);
    let text = "";
    await writeMetrics(r, (chunk) => {
      text += chunk;
      late.unregister(r);
      r.removeSingleMetric("d");
    });
    assert.equal(text, await r.metrics());
    assert.match(text, /\ne 2\n$/);
  });
});

describe("scrape-time metrics: collect", () => {
  for (const defaults of [false, true]) {
    it(`is asked once per scrape and iterated once${defaults ? " (default labels)" : ""}`, async () => {
      const r = new Registry();
      if (defaults) r.setDefaultLabels({ pod: "p-1" });
      let calls = 0;
      let iterated = 0;
      new ScrapeTimeMetric({
        name: "b_seconds",
        help: "many",
        type: "gauge",
        collect: function* () {
          calls++;
          for (const s of series(2_000)()) {
            iterated++;
            yield s;
          }
        },
      }).register(r);
      await written(r);
      assert.deepEqual({ calls, iterated }, { calls: 1, iterated: 2_000 });
    });
  }
});
