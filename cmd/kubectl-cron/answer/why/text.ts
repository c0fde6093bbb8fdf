// The diagnosis as the command prints it: one CronJob in full; a list none of which needs attention.
import type { Diagnosis } from "./verdict.ts";

/** The diagnosis as the command prints it. */
export function whyText(d: Diagnosis): string {
  const lines = [`${d.cronJob.namespace}/${d.cronJob.name}: ${d.verdict}`];
  if (d.slot?.note) lines.push(`  (${d.slot.note})`);
  if (d.evidence.length) lines.push("Evidence:", ...d.evidence.map((e) => `  - ${e}`));
  if (d.fix.length) lines.push("Fix:", ...d.fix.map((x) => `  - ${x}`));
  if (d.next) {
    lines.push(
      `Next: ${d.next.text}${d.next.note ? ` (${d.next.note})` : ""}${d.next.blocked ? `; ${d.next.blocked}` : ""}`,
    );
  }
  if (d.runBy) lines.push(`Run by: ${d.runBy.text}`);
  for (const a of d.also) {
    lines.push(
      `Also: ${a.summary} [${a.cause}]`,
      ...a.evidence.map((e) => `  - ${e}`),
      ...a.fix.map((x) => `  fix: ${x}`),
    );
  }
  if (d.unreadable.length) lines.push(`Could not read: ${d.unreadable.join("; ")}`);
  return `${lines.join("\n")}\n`;
}

/** A list none of which needs attention (the lines of those that do: fleet.ts). */
export function allHealthyText(checked: number): string {
  return `all ${checked} CronJobs ran as scheduled\n`;
}
