// A port of Go's time.ParseDuration, because `@every` takes whatever Kubernetes (robfig/cron) takes and the Go
// grammar has corners (".5h", "1h-" is not allowed, "µs", overflow limits) that a hand-rolled regex gets wrong.

const MAX_INT64 = (1n << 63n) - 1n;
const LIMIT = 1n << 63n;

const UNIT_NANOS: Readonly<Record<string, bigint>> = {
  ns: 1n,
  us: 1_000n,
  "\u00b5s": 1_000n, // MICRO SIGN
  "\u03bcs": 1_000n, // GREEK SMALL LETTER MU
  ms: 1_000_000n,
  s: 1_000_000_000n,
  m: 60_000_000_000n,
  h: 3_600_000_000_000n,
};

type DurationResult = { ok: true; nanoseconds: bigint } | { ok: false; reason: string };

function isDigit(c: string | undefined): boolean {
  return c !== undefined && c >= "0" && c <= "9";
}

/** Parses a Go duration string into signed nanoseconds; the reason on failure reads like Go's error. */
export function parseGoDuration(input: string): DurationResult {
  const invalid: DurationResult = { ok: false, reason: `invalid duration ${JSON.stringify(input)}` };
  let s = input;
  let negative = false;
  if (s.startsWith("-") || s.startsWith("+")) {
    negative = s[0] === "-";
    s = s.slice(1);
  }
  if (s === "0") return { ok: true, nanoseconds: 0n };
  if (s === "") return invalid;

  let total = 0n;
  while (s !== "") {
    if (!(s[0] === "." || isDigit(s[0]))) return invalid;

    // Integer part; Go errors out on overflow here rather than saturating.
    let i = 0;
    let whole = 0n;
    while (isDigit(s[i])) {
      if (whole > LIMIT / 10n) return invalid;
      whole = whole * 10n + BigInt(s.charCodeAt(i) - 48);
      if (whole > LIMIT) return invalid;
      i++;
    }
    const sawWhole = i > 0;
    s = s.slice(i);

    // Fraction part; Go keeps the digits that fit and silently ignores the rest.
    let fraction = 0n;
    let scale = 1;
    let sawFraction = false;
    if (s.startsWith(".")) {
      s = s.slice(1);
      let j = 0;
      let overflow = false;
      while (isDigit(s[j])) {
        if (!overflow) {
          if (fraction > MAX_INT64 / 10n) {
            overflow = true;
          } else {
            const next = fraction * 10n + BigInt(s.charCodeAt(j) - 48);
            if (next > LIMIT) {
              overflow = true;
            } else {
              fraction = next;
              scale *= 10;
            }
          }
        }
        j++;
      }
      sawFraction = j > 0;
      s = s.slice(j);
    }
    if (!sawWhole && !sawFraction) return invalid;

    let u = 0;
    while (u < s.length && s[u] !== "." && !isDigit(s[u])) u++;
    if (u === 0) return { ok: false, reason: `missing unit in duration ${JSON.stringify(input)}` };
    const unitName = s.slice(0, u);
    s = s.slice(u);
    const unit = UNIT_NANOS[unitName];
    if (unit === undefined) {
      return { ok: false, reason: `unknown unit ${JSON.stringify(unitName)} in duration ${JSON.stringify(input)}` };
    }
    if (whole > LIMIT / unit) return invalid;
    let value = whole * unit;
    if (fraction > 0n) {
      // Go does this step in float64 too, so rounding matches for fractions of hours.
      value += BigInt(Math.trunc(Number(fraction) * (Number(unit) / scale)));
      if (value > LIMIT) return invalid;
    }
    total += value;
    if (total > LIMIT) return invalid;
  }
  if (negative) return { ok: true, nanoseconds: -total };
  if (total > MAX_INT64) return invalid;
  return { ok: true, nanoseconds: total };
}

/** Go's Duration.String for whole seconds, so a normalised `@every` reads the way kubectl users expect. */
export function formatGoSeconds(seconds: number): string {
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  if (h > 0) return `${h}h${m}m${s}s`;
  if (m > 0) return `${m}m${s}s`;
  return `${s}s`;
}
