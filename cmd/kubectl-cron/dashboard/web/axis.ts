// The time axis: ticks on the browser's local minutes, hours and days, the window's range and now.
import { type VNode } from "preact";
import { MINUTE, type Win, dayFmt, e, scaleOf, timeFmt, fullFmt } from "./base.ts";

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

export function Axis({ win, width, now }: { win: Win; width: number; now: number }): VNode {
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
