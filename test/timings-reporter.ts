// A node:test reporter that says where a runner's time went: the slowest files (the sum of their top-level
// suites) and the slowest suites that hold only tests, with their durations. The runners write it beside the spec
// output (bin/test-timings/<runner>.txt), and .ci/run prints every runner's at the end of a run.
import { relative } from "node:path";

interface Event {
  type: string;
  data: {
    name: string;
    nesting: number;
    file?: string;
    details?: { duration_ms?: number; type?: "suite" | "test" };
  };
}

const TOP = 10;

export default async function* timings(source: AsyncIterable<Event>): AsyncGenerator<string> {
  const files = new Map<string, number>();
  const suites: { ms: number; name: string; file: string }[] = [];
  /** Per file and nesting: whether a suite finished below that level since the level's last event. */
  const childSuite = new Map<string, boolean[]>();
  for await (const e of source) {
    if (e.type !== "test:pass" && e.type !== "test:fail") continue;
    const { nesting, name, details } = e.data;
    const file = e.data.file ? relative(process.cwd(), e.data.file) : "(no file)";
    const ms = details?.duration_ms ?? 0;
    if (nesting === 0) files.set(file, (files.get(file) ?? 0) + ms);
    const flags = childSuite.get(file) ?? [];
    childSuite.set(file, flags);
    if (details?.type === "suite") {
      if (!flags[nesting + 1]) suites.push({ ms, name, file });
      flags[nesting] = true;
    }
    flags[nesting + 1] = false;
  }
  const line = (ms: number, what: string) => `${(ms / 1000).toFixed(1).padStart(8)} s  ${what}\n`;
  yield `slowest files (of ${files.size}):\n`;
  for (const [f, ms] of [...files].sort((a, b) => b[1] - a[1]).slice(0, TOP)) yield line(ms, f);
  yield `slowest suites (of ${suites.length}):\n`;
  for (const s of suites.sort((a, b) => b.ms - a.ms).slice(0, TOP)) yield line(s.ms, `${s.name} (${s.file})`);
}
