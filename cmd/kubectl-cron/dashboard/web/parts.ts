// The page's small parts: the banner (what cannot be read, errors), the filters' controls, and how a push merges into
// the rows and lanes the page holds.
import { type ComponentChildren, type VNode } from "preact";
import { type Fleet, type GroupLane, type Row, PAGE_WORDS as W } from "../view.ts";
import { e } from "./base.ts";

export type Live = "connecting" | "live" | "reconnecting";

export function mergeRows(rows: Row[], changed: Row[], removed: string[]): Row[] {
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
export function mergeLanes(lanes: GroupLane[], changed: GroupLane[], namespaces: string[]): GroupLane[] {
  const replaced = new Set(namespaces);
  return [...lanes.filter((g) => !replaced.has(g.namespace)), ...changed].sort((a, b) => a.id.localeCompare(b.id));
}

export function Banner({ fleet, error }: { fleet: Fleet | null; error: string | null }): VNode | null {
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

export function Select({
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

export function field(label: string, child: ComponentChildren): VNode {
  return e("label", { class: "field" }, e("span", null, label), child);
}
