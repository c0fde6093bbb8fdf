// The diagnosis as the command prints it: one CronJob in full, or one line each.
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

/** One line per CronJob that needs attention (namespace or -A). */
export function whyListText(ds: readonly Diagnosis[], allNamespaces: boolean): string {
  const attention = ds.filter((d) => d.exitCode !== 0);
  if (attention.length === 0) return `all ${ds.length} CronJobs ran as scheduled\n`;
  return (
    attention
      .map((d) => {
        const who = allNamespaces ? `${d.cronJob.namespace}/${d.cronJob.name}` : d.cronJob.name;
        const cause = d.cause ?? d.also[0]?.cause ?? "unknown";
        const text = d.status === "healthy" && d.also[0] ? d.also[0].summary : d.verdict;
        return `${who}\t${cause}\t${text}`;
      })
      .join("\n") + "\n"
  );
}
