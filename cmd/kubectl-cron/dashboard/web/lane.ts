// A concurrency group as a lane: the places its runs used over time (a step line) and the runs that waited.
import { type VNode } from "preact";
import { type GroupLane, PAGE_WORDS as W } from "../view.ts";
import { MIN_BAR, type Win, e, fullFmt, ms, scaleOf } from "./base.ts";

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

export function Lane({ lane, win, width, now }: { lane: GroupLane; win: Win; width: number; now: number }): VNode {
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
