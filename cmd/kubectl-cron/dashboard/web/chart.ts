// The chart: the time axis, the groups' lanes, and the rows, of which only those in view (and a few beyond each
// edge) are drawn; the line of now across them.
import { h, type Ref, type VNode } from "preact";
import { type GroupLane, type Row, type RowMarks, PAGE_WORDS as W } from "../view.ts";
import { Axis } from "./axis.ts";
import { e, LABEL_W, ROW_H, type Scale, type Win } from "./base.ts";
import { Lane } from "./lane.ts";
import { RowView } from "./row.ts";

interface ChartProps {
  win: Win;
  width: number;
  now: number;
  scale: Scale;
  lanes: GroupLane[];
  /** The rows the filters leave, and of them the ones drawn (from index `first`). */
  filtered: Row[];
  visible: Row[];
  first: number;
  /** Whether anything was read yet, and whether the fleet has any row (to say which emptiness it is). */
  loaded: boolean;
  anyRows: boolean;
  marksOf(id: string): RowMarks | undefined;
  showNs: boolean;
  selected: string | undefined;
  open(id: string, slot?: string): void;
  listRef: Ref<HTMLDivElement>;
  onScroll(top: number): void;
}

export function Chart(p: ChartProps): VNode {
  const nx = p.scale(p.now);
  return e(
    "main",
    { class: "chart" },
    h(Axis, { win: p.win, width: p.width, now: p.now }),
    p.lanes.length > 0
      ? e(
          "div",
          { class: "lanes", "data-lanes": "" },
          p.lanes.map((g) => h(Lane, { key: g.id, lane: g, win: p.win, width: p.width, now: p.now })),
        )
      : null,
    e(
      "div",
      {
        class: "rows",
        ref: p.listRef,
        "data-rows": p.filtered.length,
        onScroll: (ev: Event) => p.onScroll((ev.currentTarget as HTMLDivElement).scrollTop),
      },
      e(
        "div",
        { class: "rows-inner", style: { height: `${p.filtered.length * ROW_H}px` } },
        p.visible.map((r, i) =>
          h(RowView, {
            key: r.id,
            row: r,
            top: (p.first + i) * ROW_H,
            marks: p.marksOf(r.id),
            showNs: p.showNs,
            scale: p.scale,
            width: p.width,
            now: p.now,
            selected: p.selected === r.id,
            open: p.open,
          }),
        ),
        nx >= 0 && nx <= p.width
          ? e("div", {
              class: "now-rule",
              style: { left: `${LABEL_W + nx}px`, height: `${p.filtered.length * ROW_H}px` },
            })
          : null,
      ),
      p.loaded && p.filtered.length === 0
        ? e("p", { class: "empty", "data-empty": "" }, p.anyRows ? W.noMatch : W.none)
        : null,
    ),
  );
}
