// The words of a cause, as its row in cmd/kubectl-cron/answer/causes.ts says them: what `kubectl cron why` prints must be
// the row's verdict and fix lines with the placeholders filled in (the fix: some of its lines, in the row's order),
// nothing reworded. The verdicts that name no cause are held to their table (NO_CAUSE) the same way. And every
// sentence the table can say, in pieces, for the check that no other module writes one out (causes-words.test.ts).
import {
  CAUSES,
  type CauseId,
  causeOf,
  FLEET,
  NO_CAUSE,
  PLACEHOLDERS,
  REQUESTED,
} from "../cmd/kubectl-cron/answer/causes.ts";

type Params = typeof PLACEHOLDERS;
type Say = (p: Params) => string;

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** A line of the row (with PLACEHOLDERS) as a pattern: each placeholder stands for a name or a fact. */
function linePattern(line: string): RegExp {
  const names = [...new Set(Object.values(PLACEHOLDERS).filter((v): v is string => typeof v === "string"))];
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

const renderingsOf = new Map<string, string[]>();
const ids = new Map<Say, number>();

/**
 * Every way `say` words a verdict with the placeholders: for each choice of the facts it reads, a flag either way
 * and a fact given or not (a rendering that says "undefined" or fails needs that fact, and is not one). `as`: a
 * verdict on the slot (`when` given), a finding besides it (no `when`), or either.
 */
export function renderings(say: Say, as: "verdict" | "finding" | "either" = "either"): string[] {
  if (!ids.has(say)) ids.set(say, ids.size);
  const key = `${ids.get(say)}/${as}`;
  const known = renderingsOf.get(key);
  if (known) return known;
  const read = new Set<keyof Params>();
  const watched = (p: Params) =>
    new Proxy(p, {
      get: (t, k) => {
        if (typeof k === "string" && k in PLACEHOLDERS) read.add(k as keyof Params);
        return t[k as keyof Params];
      },
    });
  const out = new Set<string>();
  let keys: (keyof Params)[] = [];
  const base: Record<string, unknown> = { ...PLACEHOLDERS };
  if (as === "finding") delete base.when;
  // Said with every fact (words that read none have this one rendering).
  const first = say(watched(base as Params));
  if (!/\bundefined\b/.test(first)) out.add(first);
  // The facts it reads, `when` aside unless either will do; reading grows as flags open other words.
  const flippable = () => [...read].filter((k) => as === "either" || k !== "when");
  for (let next = flippable(); next.length > keys.length; next = flippable()) {
    keys = next;
    for (let mask = 0; mask < 1 << keys.length; mask++) {
      const p: Record<string, unknown> = { ...base };
      keys.forEach((k, i) => {
        if (mask & (1 << i)) p[k] = typeof PLACEHOLDERS[k] === "boolean" ? !PLACEHOLDERS[k] : undefined;
      });
      try {
        const s = say(watched(p as Params));
        if (!/\bundefined\b/.test(s)) out.add(s);
      } catch {
        // a fact the words need
      }
    }
  }
  const all = [...out];
  renderingsOf.set(key, all);
  return all;
}

/** Whether `words` are `rendering`'s (a verdict said with PLACEHOLDERS) with the facts filled in. */
export const saysAs = (rendering: string, words: string) => linePattern(rendering).test(words);

/** Why `words` is not one of `say`'s renderings with the facts filled in (undefined when it is). */
function differs(what: string, say: Say, words: string, as: "verdict" | "finding" | "either"): string | undefined {
  const all = renderings(say, as);
  return all.some((r) => saysAs(r, words))
    ? undefined
    : `${what}: ${JSON.stringify(words)} is not its row's words, with any facts: ${JSON.stringify(all)}`;
}

/**
 * Why `words` are not the row's for `cause`: as a diagnosis's verdict (said of its slot), or (`as` "finding") as an
 * `also` finding's summary (of no slot); "either" for a verdict about no slot (a schedule that has none).
 */
export function verdictDiffersFromRow(
  cause: CauseId,
  words: string,
  as: "verdict" | "finding" | "either" = "verdict",
): string | undefined {
  return differs(`${cause} (${as})`, causeOf(cause).verdict, words, as);
}

/** Why a verdict naming no cause is none of NO_CAUSE's words. */
export function verdictDiffersFromNoCause(verdict: string): string | undefined {
  const says = Object.values(NO_CAUSE) as Say[];
  return says.some((say) => differs("", say, verdict, "either") === undefined)
    ? undefined
    : `${JSON.stringify(verdict)} names no cause and is none of NO_CAUSE's words: ${JSON.stringify(says.flatMap((say) => renderings(say)))}`;
}

/** What FLEET's lines are said with in the pieces below: its facts beside PLACEHOLDERS (its counts: numbers). */
const FLEET_PLACEHOLDERS = { summary: "SUMMARY", names: ["NAMES"], calendar: "CALENDAR", message: "MESSAGE" };

/**
 * Every sentence the table can say, with the placeholders: each row's verdict (as a verdict and as a finding), its
 * fix lines and its `next`, in each of their renderings; NO_CAUSE's, REQUESTED's and FLEET's words.
 */
export function tableSentences(): string[] {
  const out = new Set<string>();
  const add = (say: Say) => renderings(say).forEach((s) => s.split("\n").forEach((line) => out.add(line)));
  for (const c of CAUSES) {
    add(c.verdict as Say);
    add((p) => c.fix(p).join("\n"));
    if ("next" in c) add(c.next as Say);
  }
  for (const say of [...Object.values(NO_CAUSE), ...Object.values(REQUESTED)]) add(say as Say);
  for (const missing of [true, false]) {
    for (const limit of [1, undefined]) {
      const p = { ...PLACEHOLDERS, ...FLEET_PLACEHOLDERS, inUse: 1, limit, missing };
      for (const say of Object.values(FLEET)) out.add(say(p));
    }
  }
  return [...out];
}

/** The fewest words a piece of a sentence has to say for a module that writes it out to be writing the table's. */
const FEWEST_WORDS = 3;

/**
 * A sentence's own words: its pieces between its placeholders (and numbers, which stand for counts), trimmed of the
 * punctuation around them, that say at least FEWEST_WORDS words.
 */
export function fixedTexts(sentence: string): string[] {
  const names = [...Object.values(PLACEHOLDERS), ...Object.values(FLEET_PLACEHOLDERS).flat()].filter(
    (v): v is string => typeof v === "string",
  );
  const placeholder = new RegExp(`\\b(?:${[...new Set(names)].sort((a, b) => b.length - a.length).join("|")})\\b|\\d+`);
  return sentence
    .split(placeholder)
    .map(trimmed)
    .filter((piece) => piece.split(" ").filter((w) => /[A-Za-z]/.test(w)).length >= FEWEST_WORDS);
}

/** Text with its spaces collapsed and the punctuation and spaces around it cut. */
export const trimmed = (s: string) => s.replace(/\s+/g, " ").replace(/^[\s:;,.()'"`/]+|[\s:;,.()'"`/]+$/g, "");

/** Whether `text` says `piece` in whole words (not "has no Pod" in "has no Pods", nor "spec.x" in "spec.x.y"). */
export const saysPiece = (text: string, piece: string) =>
  new RegExp(`(?<![\\w.-])${escape(piece)}(?![\\w.-])`).test(text);
