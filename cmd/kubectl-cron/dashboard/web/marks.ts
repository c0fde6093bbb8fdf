// A row's marks (runs, decisions, slots to come) and shades as SVG, the legend that draws each kind as a row does, and
// the patterns they share.
// ---------- marks ----------
import { type VNode } from "preact";
import { type Mark, MARK_WORDS, type MarkKind, SHADE_WORDS, type Shade, PAGE_WORDS as W } from "../view.ts";
import { MID, MIN_BAR, ROW_H, type Scale, e, ms } from "./base.ts";

/** The data-* attributes tests find a mark by. */
function markAttrs(m: Mark): Record<string, string> {
  const a: Record<string, string> = { "data-kind": m.kind, "data-at": m.at };
  if (m.slot !== undefined) a["data-slot"] = m.slot;
  if (m.job !== undefined) a["data-job"] = m.job;
  if (m.count !== undefined) a["data-count"] = String(m.count);
  return a;
}

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
    case "pending":
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

export function markNode(m: Mark, x: Scale, now: number, width: number, onSlot: (slot: string) => void): VNode | null {
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

export function shadeNodes(shades: Shade[], x: Scale, width: number): VNode[] {
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

export function Legend(): VNode {
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
export function Defs(): VNode {
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
