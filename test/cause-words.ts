// The words of a cause's fix, as its row in cmd/kubectl-cron/causes.ts says them: what `kubectl cron why` prints
// must be the row's lines with the placeholders filled in (some of them, in the row's order), nothing reworded.
import { type CauseId, causeOf, PLACEHOLDERS } from "../cmd/kubectl-cron/causes.ts";

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** A fix line of the row (with PLACEHOLDERS) as a pattern: each placeholder stands for a name. */
function linePattern(line: string): RegExp {
  const names = Object.values(PLACEHOLDERS).filter((v): v is string => typeof v === "string");
  // The longest first: OPERATOR_NAMESPACE before NAMESPACE before NAME.
  const placeholder = new RegExp(`\\b(${names.sort((a, b) => b.length - a.length).join("|")})\\b`, "g");
  const parts = line.split(placeholder);
  return new RegExp(`^${parts.map((p, i) => (i % 2 ? "(?!undefined\\b)(\\S.*?)" : escape(p))).join("")}$`);
}

/** Why `fix` is not the row's words for `cause` (undefined when it is). */
export function fixDiffersFromRow(cause: CauseId, fix: readonly string[]): string | undefined {
  const rows = causeOf(cause).fix(PLACEHOLDERS);
  let next = 0;
  for (const line of fix) {
    const at = rows.findIndex((r, i) => i >= next && linePattern(r).test(line));
    if (at < 0) {
      return `${cause}: fix line ${JSON.stringify(line)} is not one of its row's (in order): ${JSON.stringify(rows)}`;
    }
    next = at + 1;
  }
  return fix.length ? undefined : `${cause}: no fix`;
}
