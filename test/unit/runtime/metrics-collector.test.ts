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
