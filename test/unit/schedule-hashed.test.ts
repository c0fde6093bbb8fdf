// Hashed schedule fields (Jenkins' "H"): each form, the errors, stability, spread, per-field independence, and
// properties: resolved text always parses with the unchanged Kubernetes grammar and denotes the values the
// formulas say; a schedule without H resolves to itself and parses exactly as before.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { describe, it } from "node:test";
import fc from "fast-check";
import {
  HASH_FIELDS,
  parseHashedSchedule,
  parseSchedule,
  parseScheduleSpec,
  resolveHashedSchedule,
  ScheduleError,
  scheduleHashes,
  type CronFields,
  type HashKey,
} from "../../api/v1/schedule/index.ts";

const KEY: HashKey = { namespace: "default", name: "backup" };

function resolved(schedule: string, key: HashKey = KEY): string {
  const r = resolveHashedSchedule(schedule, key);
  assert.ok(r.ok, r.ok ? "" : r.error.message);
  return r.resolved;
}

function refusal(schedule: string, key: HashKey = KEY): ScheduleError {
  const r = resolveHashedSchedule(schedule, key);
  assert.ok(!r.ok, `${JSON.stringify(schedule)} was accepted as ${r.ok ? r.resolved : ""}`);
  assert.ok(r.error instanceof ScheduleError);
  assert.equal(r.error.field, "spec.schedule");
  assert.equal(r.error.value, schedule);
  return r.error;
}

/** The hash of a field, computed here from the documented definition (not from the module). */
function hashOf(key: HashKey, field: number): number {
  return createHash("sha256")
    .update(`${key.namespace}/${key.name}`)
    .digest()
    .readUInt32BE(4 * field);
}

function fieldsOf(text: string): CronFields {
  const spec = parseScheduleSpec(text);
  assert.ok(spec.ok && spec.spec.kind === "cron", text);
  return spec.spec.fields;
}

const FIELD_VALUES: Array<(f: CronFields) => readonly number[]> = [
  (f) => f.minute,
  (f) => f.hour,
  (f) => f.dayOfMonth,
  (f) => f.month,
  (f) => f.dayOfWeek,
];

function span(from: number, to: number, step: number): number[] {
  const out: number[] = [];
  for (let v = from; v <= to; v += step) out.push(v);
  return out;
}

describe("hashed schedules: the forms", () => {
  it("pins the values for a fixed key (a change of hash would move every CronJob's runs)", () => {
    const pinned: Array<[string, string]> = [
      ["H * * * *", "22 * * * *"],
      ["H H * * *", "22 1 * * *"],
      ["H/15 * * * *", "7-59/15 * * * *"],
      ["H(0-29) * * * *", "22 * * * *"],
      ["H(0-29)/10 * * * *", "2-29/10 * * * *"],
      ["0 H(9-17) * * *", "0 10 * * *"],
      ["H H H H H", "22 1 25 10 4"],
      ["H/5 H/4 H/7 H/3 H/2", "2-59/5 1-23/4 4-28/7 1-12/3 1-6/2"],
    ];
    for (const [schedule, want] of pinned) assert.equal(resolved(schedule), want, schedule);
    assert.equal(resolved("H H * * *", { namespace: "prod", name: "backup" }), "42 15 * * *");
  });

  it("computes each form from the documented formula, in every field", () => {
    const keys: HashKey[] = [KEY, { namespace: "kube-system", name: "x" }, { namespace: "a", name: "b".repeat(52) }];
    for (const key of keys) {
      for (const [i, f] of HASH_FIELDS.entries()) {
        const h = hashOf(key, i);
        const at = (token: string) => {
          const tokens = ["*", "*", "*", "*", "*"];
          tokens[i] = token;
          return resolved(tokens.join(" "), key).split(" ")[i];
        };
        assert.equal(at("H"), String(f.hashMin + (h % (f.hashMax - f.hashMin + 1))), `${f.name} H`);
        assert.equal(at("H/3"), `${f.hashMin + (h % 3)}-${f.hashMax}/3`, `${f.name} H/3`);
        const [a, b] = [f.min + 1, f.max - 1];
        assert.equal(at(`H(${a}-${b})`), String(a + (h % (b - a + 1))), `${f.name} H(a-b)`);
        assert.equal(at(`H(${a}-${b})/2`), `${a + (h % 2)}-${b}/2`, `${f.name} H(a-b)/n`);
      }
    }
  });

  it("uses Jenkins' ranges: day-of-month 1-28 so that every month has it, day-of-week 0-6", () => {
    assert.deepEqual(
      HASH_FIELDS.map((f) => [f.name, f.hashMin, f.hashMax]),
      [
        ["minute", 0, 59],
        ["hour", 0, 23],
        ["day-of-month", 1, 28],
        ["month", 1, 12],
        ["day-of-week", 0, 6],
      ],
    );
    for (let i = 0; i < 2000; i++) {
      const day = Number(resolved("0 0 H * *", { namespace: "ns", name: `n${i}` }).split(" ")[2]);
      assert.ok(day >= 1 && day <= 28, String(day));
    }
  });

  it("spells the examples the way the documentation does", () => {
    const minute = hashOf(KEY, 0);
    assert.equal(resolved("H/15 * * * *"), `${minute % 15}-59/15 * * * *`);
    // H/n over the whole range: the start is H's value reduced mod n, so H/15 keeps the minute H picks.
    assert.ok(fieldsOf(resolved("H/15 * * * *")).minute.includes(Number(resolved("H * * * *").split(" ")[0])));
    // Separators are normalised once H is resolved; fields without H are kept as written.
    assert.equal(resolved("H\t 9-17/2  ? jan,JUL mon-fri"), `${minute % 60} 9-17/2 ? jan,JUL mon-fri`);
    // Empty list items are dropped, as by the grammar.
    assert.equal(resolved("H, * * * *"), resolved("H * * * *"));
  });

  it("lets DST follow the resolved text: H in the hour is a fixed hour, H/n a step", () => {
    const fixed = parseHashedSchedule("H H * * *", KEY, "Europe/Berlin");
    assert.ok(fixed.ok && !fixed.schedule.followsRealTime);
    const stepped = parseHashedSchedule("H H/6 * * *", KEY, "Europe/Berlin");
    assert.ok(stepped.ok && stepped.schedule.followsRealTime);
  });
});

describe("hashed schedules: refused, with the field and the item", () => {
  const refused: Array<[string, string]> = [
    ["H(50-70) * * * *", "minute H(50-70): range must lie within 0-59"],
    ["0 H(20-24) * * *", "hour H(20-24): range must lie within 0-23"],
    ["0 0 H(0-10) * *", "day-of-month H(0-10): range must lie within 1-31"],
    ["0 0 * H(1-13) *", "month H(1-13): range must lie within 1-12"],
    ["0 0 * * H(1-7)", "day-of-week H(1-7): range must lie within 0-6"],
    ["H(5-2) * * * *", "minute H(5-2): range is reversed (5 > 2); write it as H(low-high)"],
    ["H/0 * * * *", "minute H/0: step must be at least 1"],
    ["H(0-29)/0 * * * *", "minute H(0-29)/0: step must be at least 1"],
    ["H/61 * * * *", "minute H/61: step must be at most 60, the number of values in 0-59"],
    ["0 0 H/29 * *", "day-of-month H/29: step must be at most 28, the number of values in 1-28"],
    ["H(0-9)/11 * * * *", "minute H(0-9)/11: step must be at most 10, the number of values in 0-9"],
    ["h * * * *", "minute h: write H in upper case (H)"],
    ["0 h/2 * * *", "hour h/2: write H in upper case (H/2)"],
    ["h(0-29) * * * *", "minute h(0-29): write H in upper case (H(0-29))"],
    ["H,30 * * * *", "minute H,30: H cannot be part of a list; use H, H/n, H(a-b) or H(a-b)/n alone in the field"],
    ["0 1,H * * *", "hour 1,H: H cannot be part of a list; use H, H/n, H(a-b) or H(a-b)/n alone in the field"],
  ];
  const malformed = [
    "H-5",
    "5-H",
    "*/H",
    "H(0-29",
    "H(0-29)/",
    "H(jan-jun)",
    "H/-1",
    "H()",
    "H(1)",
    "H/1/2",
    "H(+1-5)",
  ];

  for (const [schedule, reason] of refused) {
    it(schedule, () => {
      const e = refusal(schedule);
      assert.equal(e.reason, reason);
      assert.equal(e.message, `spec.schedule: Invalid value: ${JSON.stringify(schedule)}: ${reason}`);
    });
  }

  it("refuses malformed H items and says what the forms are", () => {
    for (const item of malformed) {
      const month = item.includes("jan");
      const schedule = month ? `0 0 * ${item} *` : `${item} * * * *`;
      assert.equal(
        refusal(schedule).reason,
        `${month ? "month" : "minute"} ${item}: not a hashed value; the forms are H, H/n, H(a-b) or H(a-b)/n with whole numbers, alone in the field`,
      );
    }
  });

  it("refuses H in a descriptor: @hourly and @every keep Kubernetes' meaning", () => {
    for (const s of ["@every H", "@hourly H", "@every H/15"]) {
      assert.match(refusal(s).reason, /^H cannot be used in a descriptor .* "H \* \* \* \*"/);
    }
    for (const s of ["@hourly", "@every 1h", "@every 1h30m", "@Hourly", "@every 1H"]) {
      assert.deepEqual(resolveHashedSchedule(s, KEY), { ok: true, resolved: s, hashed: false });
    }
  });

  it("needs a name and a namespace to hash from (after the syntax is right)", () => {
    assert.match(
      refusal("H * * * *", { namespace: "ns", name: "" }).reason,
      /^H needs a fixed metadata\.name: .*generateName/,
    );
    assert.match(refusal("H * * * *", { namespace: "", name: "x" }).reason, /^H needs the CronJob's namespace/);
    assert.match(refusal("H/0 * * * *", { namespace: "", name: "" }).reason, /step must be at least 1/);
    // Without H no key is needed.
    assert.deepEqual(resolveHashedSchedule("0 * * * *", { namespace: "", name: "" }), {
      ok: true,
      resolved: "0 * * * *",
      hashed: false,
    });
  });

  it("says what the schedule resolved to when the resolved text is what the grammar refuses", () => {
    let seen = 0;
    for (let i = 0; i < 50; i++) {
      const key = { namespace: "ns", name: `n${i}` };
      const r = parseHashedSchedule("0 0 H(29-31) 2 *", key);
      const day = 29 + (hashOf(key, 2) % 3);
      if (day === 29) {
        assert.ok(r.ok && r.resolved === "0 0 29 2 *" && r.hashed);
        continue;
      }
      seen++;
      assert.ok(!r.ok);
      assert.equal(r.error.value, "0 0 H(29-31) 2 *");
      assert.equal(
        r.error.reason,
        `runs as "0 0 ${day} 2 *" for this CronJob (H is hashed from namespace/name): never fires: day-of-month ${day} does not occur in February`,
      );
    }
    assert.ok(seen > 0);
    // Other errors are the grammar's own, quoting what was written.
    const bad = parseHashedSchedule("H 24 * * *", KEY);
    assert.ok(
      !bad.ok && bad.error.value === "H 24 * * *" && /: hour value 24 is out of range 0-23$/.test(bad.error.reason),
    );
    const zone = parseHashedSchedule("H * * * *", KEY, "Mars/Olympus");
    assert.ok(!zone.ok && zone.error.field === "spec.timeZone");
  });
});

describe("hashed schedules: stable, spread, independent", () => {
  it("is a pure function of namespace/name", () => {
    const a = resolved("H/15 H(0-5) H * H", { namespace: "ns", name: "job" });
    assert.equal(resolved("H/15 H(0-5) H * H", { namespace: "ns", name: "job" }), a);
    assert.deepEqual(
      scheduleHashes({ namespace: "ns", name: "job" }),
      scheduleHashes({ namespace: "ns", name: "job" }),
    );
    // "/" cannot occur in a namespace or a name, so the hashed text is unambiguous.
    assert.notDeepEqual(scheduleHashes({ namespace: "a", name: "bc" }), scheduleHashes({ namespace: "ab", name: "c" }));
  });

  // 10,000 deterministic names: the counts are fixed, so the bounds (far above what uniform hashing gives,
  // about df ± 3·sqrt(2·df)) cannot flake; they catch a biased or constant hash.
  const N = 10_000;
  const names = Array.from({ length: N }, (_, i) => ({ namespace: `team-${i % 7}`, name: `job-${i}` }));
  const all = names.map((key) => resolved("H H H H H", key).split(" ").map(Number));
  const chiSquare = (counts: readonly number[]) => {
    const expected = counts.reduce((a, b) => a + b, 0) / counts.length;
    return counts.reduce((s, c) => s + (c - expected) ** 2 / expected, 0);
  };
  const bound = (cells: number) => cells - 1 + 6 * Math.sqrt(2 * (cells - 1));

  it("spreads each field evenly over its range", () => {
    for (const [i, f] of HASH_FIELDS.entries()) {
      const counts = new Array<number>(f.hashMax - f.hashMin + 1).fill(0);
      for (const v of all) counts[(v[i] ?? 0) - f.hashMin]! += 1;
      assert.ok(
        counts.every((c) => c > 0),
        `${f.name}: some value is never picked`,
      );
      const chi = chiSquare(counts);
      assert.ok(chi < bound(counts.length), `${f.name}: chi-square ${chi.toFixed(1)} over ${counts.length} values`);
    }
    // H/15: the start is spread over 0-14.
    const starts = new Array<number>(15).fill(0);
    for (const key of names.slice(0, 3000)) starts[Number(resolved("H/15 * * * *", key).split("-")[0])]! += 1;
    assert.ok(chiSquare(starts) < bound(15));
  });

  it("hashes each field from its own bytes: minute and hour are independent", () => {
    // Joint distribution of (minute mod 6, hour mod 4): 24 cells, uniform if independent.
    const joint = new Array<number>(24).fill(0);
    for (const v of all) joint[((v[0] ?? 0) % 6) * 4 + ((v[1] ?? 0) % 4)]! += 1;
    assert.ok(chiSquare(joint) < bound(24), `chi-square ${chiSquare(joint).toFixed(1)}`);
    // A field's value says nothing about another's: "H H" is not a function of "H".
    const hoursAtMinuteZero = new Set(all.filter((v) => v[0] === 0).map((v) => v[1]));
    assert.ok(hoursAtMinuteZero.size > 12, `only ${hoursAtMinuteZero.size} hours go with minute 0`);
    // The namespace counts: the same name in two namespaces mostly lands on different minutes.
    const same = names.slice(0, 1000).filter((k) => {
      const a = resolved("H * * * *", { namespace: "a", name: k.name });
      return a === resolved("H * * * *", { namespace: "b", name: k.name });
    }).length;
    assert.ok(same < 60, `${same} of 1000 names share the minute across namespaces`);
  });
});

// ---------------------------------------------------------------------------------------------------
// Properties.

const keyArb: fc.Arbitrary<HashKey> = fc.record({
  namespace: fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,20}[a-z0-9])?$/),
  name: fc.oneof(fc.stringMatching(/^[a-z0-9]([-a-z0-9.]{0,50}[a-z0-9])?$/), fc.string({ minLength: 1 })),
});

interface HashedGen {
  text: string;
  /** The values the field must denote, given the field's hash. */
  values: (hash: number) => number[];
}

const PLAIN: readonly (readonly string[])[] = [
  ["*", "0", "*/5", "1-10", "0,30", "?"],
  ["*", "3", "9-17", "*/6", "1,13"],
  ["*", "?", "1", "1-15/2", "10,20"],
  ["*", "1", "jan-jun", "*/3", "DEC"],
  ["*", "?", "mon-fri", "0", "sat,sun"],
];

function hashedArb(i: number): fc.Arbitrary<HashedGen> {
  const f = HASH_FIELDS[i]!;
  // Day-of-month ranges stay within 1-28 here so that no month can make the result never fire.
  const max = i === 2 ? 28 : f.max;
  const range = fc
    .tuple(fc.integer({ min: f.min, max }), fc.integer({ min: f.min, max }))
    .map(([a, b]) => [Math.min(a, b), Math.max(a, b)] as const);
  const size = f.hashMax - f.hashMin + 1;
  return fc.oneof(
    fc.constant<HashedGen>({ text: "H", values: (h) => [f.hashMin + (h % size)] }),
    fc.integer({ min: 1, max: size }).map((n) => ({
      text: `H/${n}`,
      values: (h: number) => span(f.hashMin + (h % n), f.hashMax, n),
    })),
    range.map(([a, b]) => ({ text: `H(${a}-${b})`, values: (h: number) => [a + (h % (b - a + 1))] })),
    range.chain(([a, b]) =>
      fc.integer({ min: 1, max: b - a + 1 }).map((n) => ({
        text: `H(${a}-${b})/${n}`,
        values: (h: number) => span(a + (h % n), b, n),
      })),
    ),
  );
}

type FieldGen = { kind: "plain"; text: string } | ({ kind: "hashed" } & HashedGen);

const scheduleArb: fc.Arbitrary<FieldGen[]> = fc.tuple(
  ...HASH_FIELDS.map((_, i) =>
    fc.oneof(
      fc.constantFrom(...PLAIN[i]!).map((text): FieldGen => ({ kind: "plain", text })),
      hashedArb(i).map((g): FieldGen => ({ kind: "hashed", ...g })),
    ),
  ),
);

/** Does any field try to be H (what resolveHashedSchedule looks at)? */
const mentionsH = (s: string) =>
  s.split(/[\s,]+/).some((item) => item.split(/[-/]/).some((p) => /^[Hh](\(|$)/.test(p)));

describe("hashed schedules: properties", () => {
  it("resolved text always parses with parseSchedule and denotes the documented values", () => {
    fc.assert(
      fc.property(scheduleArb, keyArb, (fields, key) => {
        const text = fields.map((f) => f.text).join(" ");
        const r = resolveHashedSchedule(text, key);
        assert.ok(r.ok, r.ok ? "" : r.error.message);
        assert.equal(
          r.hashed,
          fields.some((f) => f.kind === "hashed"),
        );
        assert.ok(!/H/.test(r.resolved), r.resolved);
        const parsed = parseSchedule(r.resolved, "Europe/Berlin");
        assert.ok(parsed.ok, `${text} → ${r.resolved}: ${parsed.ok ? "" : parsed.error.message}`);
        const both = parseHashedSchedule(text, key, "Europe/Berlin");
        assert.ok(both.ok && both.resolved === r.resolved && both.schedule.description === parsed.schedule.description);
        const got = fieldsOf(r.resolved);
        const resolvedTokens = r.resolved.split(" ");
        for (const [i, f] of fields.entries()) {
          if (f.kind === "plain") assert.equal(resolvedTokens[i], f.text);
          else assert.deepEqual(FIELD_VALUES[i]!(got), f.values(hashOf(key, i)), `${text}: field ${i}`);
        }
      }),
      { numRuns: 1000 },
    );
  });

  it("a schedule without H resolves to itself and parses exactly as before", () => {
    const cronish = fc
      .array(
        fc.oneof(
          fc.constantFrom("*", "?", "0", "59", "60", "*/5", "1-5", "5-1", "mon", "THU", "L", "1#2", "", "-", "/"),
          fc.string({ maxLength: 6 }),
        ),
        { minLength: 0, maxLength: 7 },
      )
      .chain((tokens) =>
        fc
          .array(fc.constantFrom(" ", "  ", "\t", "\u00a0"), {
            minLength: tokens.length + 1,
            maxLength: tokens.length + 1,
          })
          .map((seps) => seps.map((s, i) => s + (tokens[i] ?? "")).join("")),
      );
    const anything = fc.oneof(
      cronish,
      cronish.map((s) => s.trim()),
      fc.string(),
      fc.constantFrom("@hourly", "@every 1h", "@every 90s", "@daily ", "TZ=UTC 0 * * * *", "@every H1"),
    );
    fc.assert(
      fc.property(
        anything.filter((s) => !mentionsH(s)),
        keyArb,
        (s, key) => {
          assert.deepEqual(resolveHashedSchedule(s, key), { ok: true, resolved: s, hashed: false });
          const before = parseSchedule(s);
          const now = parseHashedSchedule(s, key);
          assert.equal(now.ok, before.ok);
          if (!now.ok && !before.ok) assert.equal(now.error.message, before.error.message);
          if (now.ok && before.ok) assert.equal(now.schedule.description, before.schedule.description);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it("never throws, whatever the text", () => {
    const alphabet = fc.constantFrom("H", "h", "(", ")", "-", "/", ",", " ", "*", "0", "1", "5", "9", "@", "2");
    fc.assert(
      fc.property(
        fc.array(alphabet, { maxLength: 30 }).map((cs) => cs.join("")),
        keyArb,
        (s, key) => {
          const r = parseHashedSchedule(s, key);
          if (r.ok) assert.ok(!/[Hh]/.test(r.resolved) || !mentionsH(r.resolved));
          else assert.ok(r.error instanceof ScheduleError && r.error.message.length > 0);
        },
      ),
      { numRuns: 2000 },
    );
  });
});
