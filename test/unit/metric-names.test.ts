// The README's Metrics section names exactly the metrics the code registers (Node's process metrics aside,
// which prom-client defines): one list a dashboard or alert author can trust.
import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";

const root = join(import.meta.dirname, "..", "..");

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? sources(p) : p.endsWith(".ts") ? [p] : [];
  });
}

/** Every `new Counter|Gauge|Histogram|Summary({ name: "..." })` in the product code. */
function registeredNames(): string[] {
  const names = new Set<string>();
  for (const f of [...sources(join(root, "runtime")), ...sources(join(root, "controllers"))]) {
    const text = readFileSync(f, "utf8");
    for (const m of text.matchAll(/new (?:Counter|Gauge|Histogram|Summary)\(\{\s*name:\s*"([a-z_:]+)"/g))
      names.add(m[1]!);
  }
  return [...names].sort();
}

function readmeNames(): string[] {
  const readme = readFileSync(join(root, "README.md"), "utf8");
  const section = readme.slice(readme.indexOf("## Metrics"), readme.indexOf("\n## ", readme.indexOf("## Metrics") + 1));
  const names = new Set<string>();
  for (const m of section.matchAll(/`([a-z][a-z0-9_]+)(?:\{[^}`]*\})?`/g)) {
    const name = m[1]!;
    // Full metric names only: label values (`queue_full`) and prefixes (`workqueue_*`) are not.
    if (/_(total|seconds|bytes|status|depth|workers|reconciles|in_flight)$/.test(name)) names.add(name);
  }
  return [...names].filter((n) => !n.startsWith("process_") && !n.startsWith("nodejs_")).sort();
}

describe("metric names", () => {
  it("the code registers metrics (the scan finds them)", () => {
    assert.ok(registeredNames().length >= 20, registeredNames().join(", "));
  });

  it("the README lists exactly the metrics the code registers", () => {
    assert.deepEqual(readmeNames(), registeredNames());
  });
});
