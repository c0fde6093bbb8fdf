// The page's header: its title, scope and live state; the filters (namespace, group, needs attention, name) with
// the count they leave; and the window's controls (earlier, now, later, its width).
import { h, type VNode } from "preact";
import { type Fleet, PAGE_WORDS as W } from "../view.ts";
import { e, WIDTHS } from "./base.ts";
import { field, type Live, Select } from "./parts.ts";

/** What the filters hold; each setter is the page's. */
interface Filters {
  ns: string;
  setNs(v: string): void;
  group: string;
  setGroup(v: string): void;
  needsAttention: boolean;
  setNeedsAttention(v: boolean): void;
  name: string;
  setName(v: string): void;
}

interface HeaderProps {
  fleet: Fleet | null;
  live: Live;
  filters: Filters;
  /** Whether the namespace filter is offered (all namespaces, or rows of several). */
  showNs: boolean;
  namespaces: string[];
  groupIds: string[];
  attentionCount: number;
  shown: number;
  all: number;
  /** The window's span (ms), and its moves. */
  span: number;
  move(k: number): void;
  widthTo(span: number): void;
  toNow(): void;
}

export function Header(p: HeaderProps): VNode {
  return e(
    "header",
    { class: "top" },
    e(
      "div",
      { class: "title" },
      e("h1", null, W.heading),
      e(
        "span",
        { class: "scope", "data-scope": "" },
        p.fleet ? W.scope(p.fleet.scope.allNamespaces ? undefined : (p.fleet.scope.namespace ?? "")) : W.loading,
      ),
      e(
        "span",
        { class: `live ${p.live}`, "data-live": p.live, title: W.liveTitle[p.live] },
        e("span", { class: "dot" }),
        W.live[p.live],
      ),
    ),
    h(FilterBar, p),
    h(WindowControls, p),
  );
}

function FilterBar({
  fleet,
  filters: f,
  showNs,
  namespaces,
  groupIds,
  attentionCount,
  shown,
  all,
}: HeaderProps): VNode {
  return e(
    "div",
    { class: "filters" },
    showNs || namespaces.length > 1
      ? field(
          W.namespace,
          h(Select, {
            name: "namespace",
            value: f.ns,
            all: W.allNamespaces,
            options: namespaces,
            onChange: (v) => {
              f.setNs(v);
              f.setGroup("");
            },
          }),
        )
      : null,
    field(
      W.group,
      h(Select, { name: "group", value: f.group, all: W.anyGroup, options: groupIds, onChange: f.setGroup }),
    ),
    e(
      "label",
      // When the verdicts were last read ("" until they have been): what a test or a benchmark waits on.
      { class: "field check", "data-verdicts": fleet?.verdictsAt ?? "" },
      e("input", {
        type: "checkbox",
        name: "attention",
        checked: f.needsAttention,
        onChange: (ev: Event) => f.setNeedsAttention((ev.currentTarget as HTMLInputElement).checked),
      }),
      e("span", null, W.needsAttention(attentionCount)),
    ),
    field(
      W.name,
      e("input", {
        type: "search",
        name: "name",
        placeholder: W.nameFilter,
        value: f.name,
        onInput: (ev: Event) => f.setName((ev.currentTarget as HTMLInputElement).value),
      }),
    ),
    e("span", { class: "count", "data-count": shown }, W.count(shown, all)),
  );
}

function WindowControls({ span, move, widthTo, toNow }: HeaderProps): VNode {
  return e(
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
  );
}
