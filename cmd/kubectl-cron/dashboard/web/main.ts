// The page of `kubectl cron dashboard`: the fleet's CronJobs on one time axis, their groups as lanes, one CronJob's
// `why`, `history` and `next` in a side panel. It only draws what the server sends (../view.ts): every word about a
// CronJob is the plugin's own, shown as text (preact escapes it; nothing here sets HTML).
import { h, render, type ComponentChildren, type VNode } from "preact";
import { useCallback, useEffect, useMemo, useRef, useState } from "preact/hooks";
import {
  MAX_MARK_IDS,
  PATHS,
  type Action,
  type ActionResult,
  type Attention,
  type Detail,
  type Fleet,
  type GroupLane,
  type Mark,
  MARK_WORDS,
  type MarkKind,
  SHADE_WORDS,
  type Push,
  type Row,
  type RowMarks,
  type Shade,
  PAGE_WORDS as W,
} from "../view.ts";

/** h for DOM and SVG elements by tag name, with their attributes (data-* included) as plain props. */
function e(tag: string, props: Record<string, unknown> | null, ...children: ComponentChildren[]): VNode {
  return h(tag, props, ...children);
}

const ROW_H = 26;
const LABEL_W = 300;
/** Rows drawn beyond each edge of the view, so a short scroll shows rows already drawn. */
const OVERSCAN = 8;
const HOUR = 3_600_000;
const MINUTE = 60_000;
const WIDTHS = [
  // Minute schedules: at 12h and wider, their slots to come merge into bands (marks.ts).
  { label: "15m", ms: 15 * MINUTE },
  { label: "1h", ms: HOUR },
  { label: "12h", ms: 12 * HOUR },
  { label: "48h", ms: 48 * HOUR },
  { label: "7d", ms: 7 * 24 * HOUR },
] as const;
const MIN_BAR = 3;

const token = new URLSearchParams(location.search).get("token") ?? "";

function url(path: string, params: Record<string, string> = {}): string {
  const q = new URLSearchParams({ token, ...params });
  return `${path}?${q.toString()}`;
}

async function getJSON<T>(href: string): Promise<T> {
  const res = await fetch(href, { headers: { Accept: "application/json" } });
  if (!res.ok) throw new Error(`${res.status} ${res.statusText}: ${(await res.text()).trim()}`);
  return (await res.json()) as T;
}

/** The ids stay literal commas between encoded ids: the server splits on them before decoding. */
function marksURL(from: number, to: number, ids: string[]): string {
  const base = url(PATHS.marks, { from: new Date(from).toISOString(), to: new Date(to).toISOString() });
  return `${base}&ids=${ids.map(encodeURIComponent).join(",")}`;
}

const ms = (s: string): number => Date.parse(s);

interface Win {
  from: number;
  to: number;
}

/** Maps a time to a pixel of the track. */
type Scale = (t: number) => number;

function scaleOf(win: Win, width: number): Scale {
  const k = width / (win.to - win.from);
  return (t) => (t - win.from) * k;
}

const timeFmt = new Intl.DateTimeFormat(undefined, { hour: "2-digit", minute: "2-digit" });
const dayFmt = new Intl.DateTimeFormat(undefined, { weekday: "short", day: "numeric", month: "short" });
const fullFmt = new Intl.DateTimeFormat(undefined, {
  weekday: "short",
  day: "numeric",
  month: "short",
  hour: "2-digit",
  minute: "2-digit",
});

/** Tick steps in minutes; the first at least ~80px apart is used. */
const STEPS = [1, 2, 5, 10, 15, 30, 60, 120, 180, 360, 720, 1440, 2880];

interface Tick {
  t: number;
  day: boolean;
}

/** Ticks on the browser's local minutes, hours (and days), stepping by wall-clock time so DST days stay aligned. */
function ticksOf(win: Win, width: number): Tick[] {
  const pxPerMinute = (width * MINUTE) / (win.to - win.from);
  const step = STEPS.find((s) => s * pxPerMinute >= 80) ?? 2880;
  const d = new Date(win.from);
  // Steps under an hour start on the hour before the window; the others at midnight.
  if (step < 60) d.setMinutes(0, 0, 0);
  else d.setHours(0, 0, 0, 0);
  const out: Tick[] = [];
  while (d.getTime() <= win.to && out.length < 500) {
    const t = d.getTime();
    if (t >= win.from) out.push({ t, day: d.getHours() === 0 && d.getMinutes() === 0 });
    if (step >= 1440) d.setDate(d.getDate() + step / 1440);
    else if (step >= 60) d.setHours(d.getHours() + step / 60);
    else d.setMinutes(d.getMinutes() + step);
  }
  return out;
}

// ---------- marks ----------

/** The data-* attributes tests find a mark by. */
function markAttrs(m: Mark): Record<string, string> {
  const a: Record<string, string> = { "data-kind": m.kind, "data-at": m.at };
  if (m.slot !== undefined) a["data-slot"] = m.slot;
  if (m.job !== undefined) a["data-job"] = m.job;
  if (m.count !== undefined) a["data-count"] = String(m.count);
  return a;
}

const MID = ROW_H / 2;

/** The glyph of a decision that started no Job, centred on x. */
function glyph(kind: MarkKind, x: number): VNode[] {
  const y = MID;
  switch (kind) {
    case "missed": // a cross: the slot passed without a run
      return [e("path", { class: "g", d: `M${x - 4} ${y - 4}L${x + 4} ${y + 4}M${x + 4} ${y - 4}L${x - 4} ${y + 4}` })];
    case "skipped": // a chevron pointing on: passed over
      return [e("path", { class: "g", d: `M${x - 3} ${y - 5}L${x + 3} ${y}L${x - 3} ${y + 5}` })];
    case "excluded": // a circle with a slash: a window held it
      return [
        e("circle", { class: "g", cx: x, cy: y, r: 4.5 }),
        e("path", { class: "g", d: `M${x - 3.2} ${y + 3.2}L${x + 3.2} ${y - 3.2}` }),
      ];
    case "refused": // a hollow square
      return [e("rect", { class: "g", x: x - 4, y: y - 4, width: 8, height: 8 })];
    case "stopped": // a filled square
      return [e("rect", { class: "g filled", x: x - 4, y: y - 4, width: 8, height: 8 })];
    case "superseded": // a triangle pointing down
      return [e("path", { class: "g filled", d: `M${x - 4.5} ${y - 4}L${x + 4.5} ${y - 4}L${x} ${y + 4}Z` })];
    case "held": // pause bars
      return [e("path", { class: "g", d: `M${x - 2} ${y - 5}V${y + 5}M${x + 2} ${y - 5}V${y + 5}` })];
    default: // a diamond, for a kind this page does not know yet
      return [e("path", { class: "g filled", d: `M${x} ${y - 5}L${x + 5} ${y}L${x} ${y + 5}L${x - 5} ${y}Z` })];
  }
}

/** What a mark draws, or null when it falls outside the track. */
function markBody(m: Mark, x: Scale, now: number, width: number): VNode[] | null {
  const x0 = x(ms(m.at));
  let body: VNode[];
  switch (m.kind) {
    case "succeeded":
    case "failed":
    case "running": {
      const end = m.end ? ms(m.end) : now;
      const x1 = Math.max(x(end), x0 + MIN_BAR);
      if (x1 < 0 || x0 > width) return null;
      body = [e("rect", { class: "bar", x: x0, y: 6, width: x1 - x0, height: ROW_H - 12, rx: 2 })];
      break;
    }
    case "held": {
      const x1 = m.end ? Math.max(x(ms(m.end)), x0 + MIN_BAR) : x0;
      if (x1 < -6 || x0 > width + 6) return null;
      body = [];
      if (x1 > x0) body.push(e("rect", { class: "span", x: x0, y: 8, width: x1 - x0, height: ROW_H - 16 }));
      body.push(...glyph("held", x0));
      break;
    }
    case "slot":
      if (x0 < -4 || x0 > width + 4) return null;
      body = [e("rect", { class: "tick", x: x0 - 2, y: 6, width: 4, height: ROW_H - 12, rx: 1 })];
      break;
    case "slot-excluded":
      if (x0 < -6 || x0 > width + 6) return null;
      body = [
        e("rect", { class: "tick", x: x0 - 2, y: 6, width: 4, height: ROW_H - 12, rx: 1 }),
        // One stroke through the tick: an X over a 4px tick reads as a glyph of its own.
        e("path", { class: "cross", d: `M${x0 - 4} ${ROW_H - 5}L${x0 + 4} 5` }),
      ];
      break;
    case "retry":
      if (x0 < -6 || x0 > width + 6) return null;
      body = [
        e("line", { class: "dash", x1: x0, y1: 3, x2: x0, y2: ROW_H - 3 }),
        e("circle", { class: "g filled", cx: x0, cy: 4, r: 2.5 }),
      ];
      break;
    case "slots": {
      const x1 = Math.max(m.end ? x(ms(m.end)) : x0, x0 + MIN_BAR);
      if (x1 < 0 || x0 > width) return null;
      const a = Math.max(x0, 0);
      const b = Math.min(x1, width);
      body = [e("rect", { class: "band", x: x0, y: MID - 2, width: x1 - x0, height: 4, rx: 2 })];
      const label = W.slots(m.count);
      // Labelled only where there is room: a label over its neighbours is worse than none (the title says it).
      if (b - a > label.length * 6 + 8) {
        body.push(e("text", { class: "band-label", x: (a + b) / 2, y: MID - 4, "text-anchor": "middle" }, label));
      }
      break;
    }
    default:
      if (x0 < -6 || x0 > width + 6) return null;
      body = glyph(m.kind, x0);
  }
  return body;
}

function markNode(m: Mark, x: Scale, now: number, width: number, onSlot: (slot: string) => void): VNode | null {
  const body = markBody(m, x, now, width);
  if (!body) return null;
  const props: Record<string, unknown> = { ...markAttrs(m), class: `mark k-${m.kind}${m.slot ? " clickable" : ""}` };
  if (m.slot) {
    const slot = m.slot;
    props["onClick"] = (ev: MouseEvent) => {
      ev.stopPropagation();
      onSlot(slot);
    };
  }
  // A transparent target around small glyphs: a 3px tick is hard to hover or click.
  const x0 = x(ms(m.at));
  const hit = e("rect", { class: "hit", x: x0 - 5, y: 0, width: 10, height: ROW_H });
  return e("g", props, e("title", null, m.title), hit, ...body);
}

function shadeNodes(shades: Shade[], x: Scale, width: number): VNode[] {
  const out: VNode[] = [];
  for (const s of shades) {
    const a = Math.max(x(ms(s.from)), 0);
    const b = Math.min(x(ms(s.to)), width);
    if (b <= a) continue;
    out.push(
      e(
        "rect",
        { class: "shade", x: a, y: 0, width: b - a, height: ROW_H, "data-shade": s.by },
        e("title", null, `${s.by}: ${s.window}`),
      ),
    );
  }
  return out;
}

// ---------- small parts ----------

/** Why -A's verdict for a suspended row when its cause is that: the suspended badge says it. */
const suspendedVerdict = (row: Row): Attention | undefined =>
  row.suspended && row.attention?.suspended ? row.attention : undefined;

/**
 * A suspended row's badge. When why -A's cause for it is that it is suspended, this one badge says why's verdict too
 * (its words, its cause, the look of a row that needs attention): two badges saying "suspended" read as two problems.
 */
function SuspendedBadge({ row }: { row: Row }): VNode | null {
  if (!row.suspended) return null;
  const a = suspendedVerdict(row);
  return e(
    "span",
    {
      class: `badge suspended-badge${a ? " attention" : ""}`,
      "data-suspended": "",
      ...(a ? { title: a.text, "data-attention": a.cause } : {}),
    },
    W.suspended,
  );
}

function AttentionBadge({ attention }: { attention: Attention | null | undefined }): VNode | null {
  if (attention === undefined) return e("span", { class: "unread", title: W.notRead, "data-unread": "" });
  if (attention === null) return null;
  return e(
    "span",
    { class: "badge attention", title: attention.text, "data-attention": attention.cause },
    attention.cause,
  );
}

function Legend(): VNode {
  // The words are view.ts's table, the same the server starts each tooltip with.
  const items = Object.entries(MARK_WORDS) as [MarkKind, { label: string; meaning: string }][];
  // The legend draws each kind as a row draws it, on a 22px track whose time is its pixel: no data-* attributes,
  // so that tests counting marks count the rows' only.
  const x: Scale = (t) => t;
  const sample = (kind: MarkKind): Mark => {
    if (kind === "succeeded" || kind === "failed" || kind === "running") {
      return { kind, at: new Date(3).toISOString(), end: new Date(19).toISOString(), title: "" };
    }
    if (kind === "slots") return { kind, at: new Date(2).toISOString(), end: new Date(20).toISOString(), title: "" };
    return { kind, at: new Date(11).toISOString(), title: "" };
  };
  return e(
    "div",
    { class: "legend", "data-legend": "" },
    items.map(([kind, { label, meaning }]) => {
      const node = e("g", { class: `mark k-${kind}` }, ...(markBody(sample(kind), x, 0, 22) ?? []));
      return e(
        "span",
        { class: "legend-item", key: kind, title: meaning },
        e("svg", { width: 22, height: ROW_H, "aria-hidden": "true" }, node),
        label,
      );
    }),
    e(
      "span",
      { class: "legend-item", title: SHADE_WORDS.meaning },
      e(
        "svg",
        { width: 22, height: ROW_H, "aria-hidden": "true" },
        e("rect", { class: "shade", x: 1, y: 3, width: 20, height: 20 }),
      ),
      SHADE_WORDS.label,
    ),
  );
}

/** Shared patterns: one definition the rows' SVGs all refer to. */
function Defs(): VNode {
  return e(
    "svg",
    { width: 0, height: 0, class: "defs", "aria-hidden": "true" },
    e(
      "defs",
      null,
      e(
        "pattern",
        { id: "hatch", width: 6, height: 6, patternUnits: "userSpaceOnUse", patternTransform: "rotate(45)" },
        e("rect", { width: 6, height: 6, class: "hatch-bg" }),
        e("line", { x1: 0, y1: 0, x2: 0, y2: 6, class: "hatch-line" }),
      ),
    ),
  );
}

function Axis({ win, width, now }: { win: Win; width: number; now: number }): VNode {
  const x = scaleOf(win, width);
  const ticks = ticksOf(win, width);
  const nx = x(now);
  return e(
    "div",
    { class: "axis", "data-axis": "" },
    e("div", { class: "label-col axis-range" }, `${fullFmt.format(win.from)} – ${fullFmt.format(win.to)}`),
    e(
      "svg",
      { width, height: 34, class: "axis-svg" },
      ticks.map((t) =>
        e(
          "g",
          { key: t.t, class: t.day ? "tick-day" : "tick-hour", "data-tick": new Date(t.t).toISOString() },
          e("line", { x1: x(t.t), y1: t.day ? 0 : 18, x2: x(t.t), y2: 34 }),
          e("text", { x: x(t.t) + 3, y: t.day ? 12 : 28 }, t.day ? dayFmt.format(t.t) : timeFmt.format(t.t)),
        ),
      ),
      // A day's label sits on the top line even when no tick of the window falls on its midnight.
      ticks.length > 0 && !ticks[0]?.day
        ? e("text", { class: "tick-day", x: 3, y: 12 }, dayFmt.format(win.from))
        : null,
      nx >= 0 && nx <= width
        ? e(
            "g",
            { class: "now", "data-now": new Date(now).toISOString() },
            e("line", { x1: nx, y1: 0, x2: nx, y2: 34 }),
          )
        : null,
    ),
  );
}

// ---------- groups ----------

const LANE_USAGE_H = 30;
const WAIT_H = 15;

/** Stacks the waits in as few lines as fit without overlap (greedy, by start). */
function packWaits(waits: GroupLane["waits"], now: number): { w: GroupLane["waits"][number]; line: number }[] {
  const sorted = [...waits].sort((a, b) => ms(a.from) - ms(b.from));
  const ends: number[] = [];
  return sorted.map((w) => {
    const from = ms(w.from);
    const to = w.to ? ms(w.to) : now;
    let line = ends.findIndex((e) => e <= from);
    if (line < 0) line = ends.push(to) - 1;
    else ends[line] = to;
    return { w, line };
  });
}

function Lane({ lane, win, width, now }: { lane: GroupLane; win: Win; width: number; now: number }): VNode {
  const x = scaleOf(win, width);
  const packed = packWaits(lane.waits, now);
  const lines = packed.reduce((n, p) => Math.max(n, p.line + 1), 0);
  const height = LANE_USAGE_H + lines * WAIT_H + 4;
  const usage = [...lane.usage].sort((a, b) => ms(a.at) - ms(b.at));
  const top = Math.max(lane.limit ?? 0, ...usage.map((u) => u.used), 1);
  const y = (used: number) => LANE_USAGE_H - 2 - (used / top) * (LANE_USAGE_H - 6);
  const base = y(0);
  const end = Math.min(x(now), width);
  let d = "";
  if (usage.length > 0 && end > 0) {
    let cur = 0;
    let i = 0;
    while (i < usage.length && ms(usage[i]!.at) <= win.from) cur = usage[i++]!.used;
    d = `M0 ${base}V${y(cur)}`;
    for (; i < usage.length; i++) {
      const u = usage[i]!;
      const ux = x(ms(u.at));
      if (ux >= end) break;
      d += `H${ux}V${y(u.used)}`;
      cur = u.used;
    }
    d += `H${end}V${base}Z`;
  }
  const label = W.lane(lane.name, lane.exists, lane.limit);
  const nx = x(now);
  return e(
    "div",
    { class: `lane${lane.exists ? "" : " missing"}`, "data-group": lane.id },
    e(
      "div",
      { class: "label-col lane-label", title: lane.id },
      e("span", { class: "lane-name" }, label),
      e("span", { class: "ns" }, lane.namespace),
    ),
    e(
      "svg",
      { width, height },
      d ? e("path", { class: "usage", d }, e("title", null, W.placesUsed)) : null,
      lane.limit !== undefined
        ? e(
            "line",
            { class: "limit", x1: 0, x2: width, y1: y(lane.limit), y2: y(lane.limit) },
            e("title", null, W.limit(lane.limit)),
          )
        : null,
      packed.map(({ w, line }, i) => {
        const a = x(ms(w.from));
        const b = Math.max(x(w.to ? ms(w.to) : now), a + MIN_BAR);
        if (b < 0 || a > width) return null;
        const va = Math.max(a, 0);
        const vb = Math.min(b, width);
        const ty = LANE_USAGE_H + line * WAIT_H;
        const title = W.waited(w.cronJob, fullFmt.format(ms(w.from)), w.to && fullFmt.format(ms(w.to)), w.job);
        return e(
          "g",
          { key: i, class: `wait${w.to ? "" : " waiting"}`, "data-wait": w.cronJob, "data-from": w.from },
          e("title", null, title),
          e("rect", { x: a, y: ty, width: b - a, height: WAIT_H - 3, rx: 2 }),
          vb - va > w.cronJob.length * 6.2 + 8 ? e("text", { x: va + 4, y: ty + WAIT_H - 6 }, w.cronJob) : null,
        );
      }),
      nx >= 0 && nx <= width ? e("line", { class: "now-line", x1: nx, x2: nx, y1: 0, y2: height }) : null,
    ),
  );
}

// ---------- rows ----------

interface RowProps {
  row: Row;
  top: number;
  marks: RowMarks | undefined;
  showNs: boolean;
  scale: Scale;
  width: number;
  now: number;
  selected: boolean;
  open: (id: string, slot?: string) => void;
}

function RowView({ row, top, marks, showNs, scale, width, now, selected, open }: RowProps): VNode {
  const onSlot = (slot: string) => open(row.id, slot);
  return e(
    "div",
    {
      class: `row${selected ? " selected" : ""}${row.suspended ? " suspended" : ""}`,
      "data-id": row.id,
      style: { top: `${top}px` },
    },
    e(
      "div",
      { class: "label-col row-label" },
      e(
        "button",
        {
          class: "name",
          type: "button",
          title: `${row.id} — ${row.schedule}`,
          onClick: () => open(row.id),
          "data-open": row.id,
        },
        showNs ? e("span", { class: "ns" }, `${row.namespace}/`) : null,
        row.name,
      ),
      h(SuspendedBadge, { row }),
      suspendedVerdict(row) ? null : h(AttentionBadge, { attention: row.attention }),
    ),
    e(
      "svg",
      { width, height: ROW_H, class: "track", "data-marks": marks ? "loaded" : "pending" },
      marks ? shadeNodes(marks.shades, scale, width) : null,
      marks ? marks.marks.map((m) => markNode(m, scale, now, width, onSlot)) : null,
    ),
  );
}

// ---------- detail ----------

type DetailState =
  | { id: string; slot?: string; loading: true }
  | { id: string; slot?: string; loading: false; detail?: Detail; error?: string };

function Panel({
  state,
  row,
  actions,
  close,
  onAction,
}: {
  state: DetailState;
  row: Row | undefined;
  actions: boolean;
  close: () => void;
  onAction: (a: Action, id: string) => Promise<ActionResult>;
}): VNode {
  const [result, setResult] = useState<(ActionResult & { action: Action }) | null>(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => setResult(null), [state.id]);
  const act = (a: Action) => {
    if (!confirm(W.confirm[a](state.id))) return;
    setBusy(true);
    onAction(a, state.id)
      .then((r) => setResult({ ...r, action: a }))
      .catch((err: unknown) => setResult({ ok: false, text: String(err), action: a }))
      .finally(() => setBusy(false));
  };
  const detail = state.loading ? undefined : state.detail;
  const section = (title: string, attr: string, text: string | undefined): VNode =>
    e("section", null, e("h3", null, title), e("pre", { [attr]: "" }, text ?? ""));
  return e(
    "aside",
    { class: "panel", "data-detail": state.id },
    e(
      "header",
      null,
      e(
        "div",
        null,
        e("h2", null, state.id),
        state.slot
          ? e(
              "div",
              { class: "slot", "data-detail-slot": state.slot },
              W.slot(fullFmt.format(ms(state.slot)), state.slot),
            )
          : null,
      ),
      e("button", { type: "button", class: "close", onClick: close, title: W.close, "data-close": "" }, "×"),
    ),
    row
      ? e(
          "div",
          { class: "panel-facts" },
          e("span", null, row.schedule),
          row.suspended ? e("span", { class: "badge suspended-badge" }, W.suspended) : null,
          row.last ? e("span", { class: `badge last-${row.last}` }, W.last(row.last)) : null,
        )
      : null,
    actions
      ? e(
          "div",
          { class: "actions" },
          (Object.entries(W.actions) as [Action, string][]).map(([a, label]) =>
            e("button", { type: "button", key: a, "data-action": a, disabled: busy, onClick: () => act(a) }, label),
          ),
        )
      : null,
    result
      ? e(
          "pre",
          {
            class: `result ${result.ok ? "ok" : "err"}`,
            "data-action-result": result.action,
            "data-ok": String(result.ok),
          },
          result.text,
        )
      : null,
    state.loading ? e("p", { class: "muted", "data-loading": "" }, W.loadingDetail) : null,
    !state.loading && state.error ? e("p", { class: "error", "data-detail-error": "" }, state.error) : null,
    detail
      ? [
          section(W.sections.why, "data-why", detail.why.text),
          section(W.sections.history, "data-history", detail.history.text),
          section(W.sections.next, "data-next", detail.next.text),
          e(
            "section",
            null,
            e("h3", null, W.sections.spec),
            e(
              "table",
              { class: "spec", "data-spec": "" },
              e(
                "tbody",
                null,
                detail.spec.map((f, i) => e("tr", { key: i }, e("th", null, f.field), e("td", null, f.value))),
              ),
            ),
          ),
        ]
      : null,
  );
}

// ---------- the page ----------

type Live = "connecting" | "live" | "reconnecting";

function mergeRows(rows: Row[], changed: Row[], removed: string[]): Row[] {
  const drop = new Set(removed);
  const byId = new Map(changed.map((r) => [r.id, r]));
  const out: Row[] = [];
  for (const r of rows) {
    if (drop.has(r.id)) continue;
    const c = byId.get(r.id);
    out.push(c ?? r);
    byId.delete(r.id);
  }
  for (const c of byId.values()) if (!drop.has(c.id)) out.push(c);
  return out;
}

/** The lanes with those of `namespaces` replaced by `changed` (a push carries all of a namespace's: a lane gone is gone). */
function mergeLanes(lanes: GroupLane[], changed: GroupLane[], namespaces: string[]): GroupLane[] {
  const replaced = new Set(namespaces);
  return [...lanes.filter((g) => !replaced.has(g.namespace)), ...changed].sort((a, b) => a.id.localeCompare(b.id));
}

function Banner({ fleet, error }: { fleet: Fleet | null; error: string | null }): VNode | null {
  const shared = fleet?.shared ?? [];
  const unreadable = fleet?.unreadable ?? [];
  if (!error && shared.length === 0 && unreadable.length === 0) return null;
  return e(
    "div",
    { class: "banner", "data-banner": "" },
    error ? e("div", { class: "error", "data-error": "" }, error) : null,
    shared.map((s, i) =>
      e(
        "div",
        { key: `s${i}`, class: "shared", "data-shared": s.cause },
        e("strong", null, s.cause),
        " ",
        e("span", null, s.text),
      ),
    ),
    unreadable.length > 0
      ? e(
          "div",
          { class: "unreadable", "data-unreadable": "" },
          e("strong", null, W.couldNotRead),
          unreadable.map((u, i) => e("span", { key: i, class: "unreadable-item" }, u)),
        )
      : null,
  );
}

function Select({
  name,
  value,
  all,
  options,
  onChange,
}: {
  name: string;
  value: string;
  all: string;
  options: string[];
  onChange: (v: string) => void;
}): VNode {
  return e(
    "select",
    { name, value, onChange: (ev: Event) => onChange((ev.currentTarget as HTMLSelectElement).value) },
    e("option", { value: "" }, all),
    options.map((o) => e("option", { key: o, value: o }, o)),
  );
}

function field(label: string, child: ComponentChildren): VNode {
  return e("label", { class: "field" }, e("span", null, label), child);
}

function App(): VNode {
  const [fleet, setFleet] = useState<Fleet | null>(null);
  const [error, setError] = useState<string | null>(null);
  // The server's clock, not the browser's: a skewed laptop would draw "now" where the runs are not.
  const skew = useRef(0);
  const [now, setNow] = useState(Date.now());
  const [win, setWin] = useState<Win>(() => ({ from: Date.now() - 24 * HOUR, to: Date.now() + 24 * HOUR }));
  const [ns, setNs] = useState("");
  const [group, setGroup] = useState("");
  const [needsAttention, setNeedsAttention] = useState(false);
  const [name, setName] = useState("");
  const [scrollTop, setScrollTop] = useState(0);
  const [box, setBox] = useState({ width: 900, height: 600 });
  const [live, setLive] = useState<Live>("connecting");
  const [detail, setDetail] = useState<DetailState | null>(null);
  const listRef = useRef<HTMLDivElement>(null);

  // Marks of the current window, by id; a new window starts a new generation and answers of an old one are dropped.
  const cache = useRef(new Map<string, RowMarks>());
  const pending = useRef(new Set<string>());
  const failed = useRef(new Set<string>());
  const gen = useRef(0);
  const [cacheVersion, setCacheVersion] = useState(0);
  const bump = useCallback(() => setCacheVersion((v) => v + 1), []);
  const resetMarks = useCallback(() => {
    gen.current++;
    cache.current = new Map();
    pending.current = new Set();
    failed.current = new Set();
    bump();
  }, [bump]);
  const detailRef = useRef<DetailState | null>(null);
  detailRef.current = detail;

  useEffect(() => {
    getJSON<Fleet>(url(PATHS.fleet))
      .then((f) => {
        skew.current = ms(f.now) - Date.now();
        const n = ms(f.now);
        setNow(n);
        setWin({ from: n - 24 * HOUR, to: n + 24 * HOUR });
        setFleet(f);
      })
      .catch((err: unknown) => setError(W.couldNotLoad("the fleet", String(err))));
    const timer = setInterval(() => setNow(Date.now() + skew.current), 30_000);
    return () => clearInterval(timer);
  }, []);

  const loadDetail = useCallback((id: string, slot?: string, quiet = false) => {
    const base = { id, ...(slot !== undefined ? { slot } : {}) };
    if (!quiet) setDetail({ ...base, loading: true });
    getJSON<Detail>(url(PATHS.detail, { id, ...(slot !== undefined ? { slot } : {}) }))
      .then((d) => {
        const cur = detailRef.current;
        if (cur && cur.id === id && cur.slot === slot) setDetail({ ...base, loading: false, detail: d });
      })
      .catch((err: unknown) => {
        const cur = detailRef.current;
        if (cur && cur.id === id && cur.slot === slot && !quiet)
          setDetail({ ...base, loading: false, error: String(err) });
      });
  }, []);

  // Live updates, once the fleet is loaded (a push before it would have nothing to merge into).
  const loaded = fleet !== null;
  useEffect(() => {
    if (!loaded) return;
    let es: EventSource | undefined;
    let retry: ReturnType<typeof setTimeout> | undefined;
    let down = false;
    const onMessage = (ev: MessageEvent<string>) => {
      let push: Push;
      try {
        push = JSON.parse(ev.data) as Push;
      } catch {
        return;
      }
      setLive("live");
      if (push.type === "changed") {
        skew.current = ms(push.now) - Date.now();
        setNow(ms(push.now));
        setFleet(
          (f) =>
            f && {
              ...f,
              rows: mergeRows(f.rows, push.rows, push.removed),
              groups: mergeLanes(f.groups, push.groups, push.laneNamespaces),
            },
        );
        for (const id of [...push.rows.map((r) => r.id), ...push.removed]) {
          cache.current.delete(id);
          failed.current.delete(id);
        }
        bump();
        const d = detailRef.current;
        if (d && push.rows.some((r) => r.id === d.id)) loadDetail(d.id, d.slot, true);
      } else if (push.type === "verdicts") {
        setFleet(
          (f) =>
            f && {
              ...f,
              verdictsAt: push.at,
              shared: push.shared,
              rows: f.rows.map((r) => {
                const a = push.attention[r.id] ?? null;
                return r.attention === a ? r : { ...r, attention: a };
              }),
            },
        );
      } else if (push.type === "unreadable") {
        setFleet((f) => f && { ...f, unreadable: push.unreadable });
      }
    };
    const connect = () => {
      es = new EventSource(url(PATHS.events));
      es.onopen = () => {
        setLive("live");
        // What changed while the stream was down was pushed to nobody: read the fleet and the marks again.
        if (down) {
          down = false;
          getJSON<Fleet>(url(PATHS.fleet))
            .then((f) => {
              skew.current = ms(f.now) - Date.now();
              setFleet(f);
              resetMarks();
            })
            .catch((err: unknown) => setError(W.couldNotLoad("the fleet", String(err))));
        }
      };
      es.onerror = () => {
        down = true;
        setLive("reconnecting");
        // The browser retries by itself, except after an error status (a server restarting, a proxy): then it
        // gives up, and the page tries again a little later.
        if (es?.readyState === EventSource.CLOSED) retry = setTimeout(connect, 5000);
      };
      es.onmessage = onMessage;
    };
    connect();
    return () => {
      clearTimeout(retry);
      es?.close();
    };
  }, [loaded, bump, loadDetail, resetMarks]);

  // The window changed: the cached marks are of another window.
  useEffect(() => resetMarks(), [win, resetMarks]);

  useEffect(() => {
    const el = listRef.current;
    if (!el) return;
    const measure = () => setBox({ width: el.clientWidth, height: el.clientHeight });
    measure();
    const ro = new ResizeObserver(measure);
    ro.observe(el);
    return () => ro.disconnect();
  }, [loaded]);

  const rows = fleet?.rows ?? [];
  const sorted = useMemo(() => [...rows].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)), [rows]);
  const namespaces = useMemo(() => [...new Set(rows.map((r) => r.namespace))].sort(), [rows]);
  const groupIds = useMemo(() => {
    const s = new Set<string>((fleet?.groups ?? []).map((g) => g.id));
    for (const r of rows) if (r.group) s.add(`${r.namespace}/${r.group}`);
    return [...s].filter((g) => !ns || g.startsWith(`${ns}/`)).sort();
  }, [rows, fleet?.groups, ns]);

  const filtered = useMemo(() => {
    const needle = name.trim().toLowerCase();
    return sorted.filter(
      (r) =>
        (!ns || r.namespace === ns) &&
        (!group || (r.group !== undefined && `${r.namespace}/${r.group}` === group)) &&
        (!needsAttention || (r.attention !== null && r.attention !== undefined)) &&
        (!needle || r.name.toLowerCase().includes(needle) || (!ns && r.id.toLowerCase().includes(needle))),
    );
  }, [sorted, ns, group, needsAttention, name]);

  const lanes = useMemo(
    () => (fleet?.groups ?? []).filter((g) => (!ns || g.namespace === ns) && (!group || g.id === group)),
    [fleet?.groups, ns, group],
  );

  const width = Math.max(200, box.width - LABEL_W);
  const scale = useMemo(() => scaleOf(win, width), [win, width]);
  const first = Math.max(0, Math.floor(scrollTop / ROW_H) - OVERSCAN);
  const last = Math.min(filtered.length, Math.ceil((scrollTop + box.height) / ROW_H) + OVERSCAN);
  const visible = filtered.slice(first, last);
  const visibleKey = visible.map((r) => r.id).join("\n");

  // Ask for the marks of the rows in view that have none for this window, a moment after scrolling stops.
  useEffect(() => {
    const timer = setTimeout(() => {
      const g = gen.current;
      const ids = visibleKey
        .split("\n")
        .filter((id) => id && !cache.current.has(id) && !pending.current.has(id) && !failed.current.has(id));
      for (let i = 0; i < ids.length; i += MAX_MARK_IDS) {
        const chunk = ids.slice(i, i + MAX_MARK_IDS);
        for (const id of chunk) pending.current.add(id);
        getJSON<RowMarks[]>(marksURL(win.from, win.to, chunk))
          .then((list) => {
            if (g !== gen.current) return;
            for (const m of list) cache.current.set(m.id, m);
            for (const id of chunk) {
              pending.current.delete(id);
              // An id the server did not answer for has no marks in this window: draw it empty, do not ask again.
              if (!cache.current.has(id)) cache.current.set(id, { id, marks: [], shades: [] });
            }
            bump();
          })
          .catch((err: unknown) => {
            if (g !== gen.current) return;
            for (const id of chunk) {
              pending.current.delete(id);
              failed.current.add(id);
            }
            setError(W.couldNotLoad("marks", String(err)));
          });
      }
    }, 100);
    return () => clearTimeout(timer);
  }, [visibleKey, win, cacheVersion, bump]);

  const move = (k: number) => setWin((w) => ({ from: w.from + k * (w.to - w.from), to: w.to + k * (w.to - w.from) }));
  const widthTo = (span: number) =>
    setWin((w) => {
      const c = (w.from + w.to) / 2;
      return { from: c - span / 2, to: c + span / 2 };
    });
  const toNow = () => {
    const n = Date.now() + skew.current;
    setNow(n);
    setWin((w) => ({ from: n - (w.to - w.from) / 2, to: n + (w.to - w.from) / 2 }));
  };
  const span = win.to - win.from;
  const showNs = fleet?.scope.allNamespaces ?? false;
  const selectedRow = detail ? rows.find((r) => r.id === detail.id) : undefined;
  const nx = scale(now);
  const attentionCount = useMemo(() => rows.filter((r) => r.attention).length, [rows]);

  const onAction = async (action: Action, id: string): Promise<ActionResult> => {
    const res = await fetch(url(PATHS.action), {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ action, id }),
    });
    const text = await res.text();
    try {
      return JSON.parse(text) as ActionResult;
    } catch {
      return { ok: false, text: `${res.status} ${res.statusText}: ${text}` };
    }
  };

  return e(
    "div",
    { class: `app${detail ? " with-panel" : ""}` },
    h(Defs, null),
    e(
      "header",
      { class: "top" },
      e(
        "div",
        { class: "title" },
        e("h1", null, W.heading),
        e(
          "span",
          { class: "scope", "data-scope": "" },
          fleet ? W.scope(fleet.scope.allNamespaces ? undefined : (fleet.scope.namespace ?? "")) : W.loading,
        ),
        e(
          "span",
          {
            class: `live ${live}`,
            "data-live": live,
            title: W.liveTitle[live],
          },
          e("span", { class: "dot" }),
          W.live[live],
        ),
      ),
      e(
        "div",
        { class: "filters" },
        showNs || namespaces.length > 1
          ? field(
              W.namespace,
              h(Select, {
                name: "namespace",
                value: ns,
                all: W.allNamespaces,
                options: namespaces,
                onChange: (v) => {
                  setNs(v);
                  setGroup("");
                },
              }),
            )
          : null,
        field(
          W.group,
          h(Select, { name: "group", value: group, all: W.anyGroup, options: groupIds, onChange: setGroup }),
        ),
        e(
          "label",
          // When why -A last read the fleet ("" until it has): what a test or a benchmark waits on.
          { class: "field check", "data-verdicts": fleet?.verdictsAt ?? "" },
          e("input", {
            type: "checkbox",
            name: "attention",
            checked: needsAttention,
            onChange: (ev: Event) => setNeedsAttention((ev.currentTarget as HTMLInputElement).checked),
          }),
          e("span", null, W.needsAttention(attentionCount)),
        ),
        field(
          W.name,
          e("input", {
            type: "search",
            name: "name",
            placeholder: W.nameFilter,
            value: name,
            onInput: (ev: Event) => setName((ev.currentTarget as HTMLInputElement).value),
          }),
        ),
        e("span", { class: "count", "data-count": filtered.length }, W.count(filtered.length, rows.length)),
      ),
      e(
        "div",
        { class: "window" },
        e(
          "button",
          { type: "button", "data-window": "earlier", onClick: () => move(-0.5), title: W.earlierTitle },
          W.earlier,
        ),
        e("button", { type: "button", "data-window": "now", onClick: toNow }, W.now),
        e("button", { type: "button", "data-window": "later", onClick: () => move(0.5), title: W.laterTitle }, W.later),
        e(
          "span",
          { class: "widths" },
          WIDTHS.map((w) =>
            e(
              "button",
              {
                type: "button",
                key: w.label,
                "data-width": w.label,
                class: Math.abs(span - w.ms) < 1000 ? "active" : "",
                onClick: () => widthTo(w.ms),
              },
              w.label,
            ),
          ),
        ),
      ),
    ),
    h(Banner, { fleet, error }),
    h(Legend, null),
    e(
      "div",
      { class: "body" },
      e(
        "main",
        { class: "chart" },
        h(Axis, { win, width, now }),
        lanes.length > 0
          ? e(
              "div",
              { class: "lanes", "data-lanes": "" },
              lanes.map((g) => h(Lane, { key: g.id, lane: g, win, width, now })),
            )
          : null,
        e(
          "div",
          {
            class: "rows",
            ref: listRef,
            "data-rows": filtered.length,
            onScroll: (ev: Event) => setScrollTop((ev.currentTarget as HTMLDivElement).scrollTop),
          },
          e(
            "div",
            { class: "rows-inner", style: { height: `${filtered.length * ROW_H}px` } },
            visible.map((r, i) =>
              h(RowView, {
                key: r.id,
                row: r,
                top: (first + i) * ROW_H,
                marks: cache.current.get(r.id),
                showNs,
                scale,
                width,
                now,
                selected: detail?.id === r.id,
                open: loadDetail,
              }),
            ),
            nx >= 0 && nx <= width
              ? e("div", {
                  class: "now-rule",
                  style: { left: `${LABEL_W + nx}px`, height: `${filtered.length * ROW_H}px` },
                })
              : null,
          ),
          fleet && filtered.length === 0
            ? e("p", { class: "empty", "data-empty": "" }, rows.length ? W.noMatch : W.none)
            : null,
        ),
      ),
      detail
        ? h(Panel, {
            state: detail,
            row: selectedRow,
            actions: fleet?.actions ?? false,
            close: () => setDetail(null),
            onAction,
          })
        : null,
    ),
  );
}

const mount = document.getElementById("app");
if (mount) render(h(App, null), mount);
