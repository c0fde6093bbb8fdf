// The page of `kubectl cron dashboard`: the fleet's CronJobs on one time axis, their groups as lanes, one CronJob's
// `why`, `history` and `next` in a side panel. It only draws what the server sends (../view.ts): every word about a
// CronJob is the plugin's own, shown as text (preact escapes it; nothing here sets HTML). Its parts: live.ts (the
// fleet and its pushes, the panel's CronJob), loader.ts (the marks in view), header.ts, chart.ts (axis.ts, lane.ts,
// row.ts, marks.ts), panel.ts.
import { h, render, type VNode } from "preact";
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { type Action, type ActionResult, type Fleet, PATHS, type Row } from "../view.ts";
import { e, LABEL_W, OVERSCAN, ROW_H, scaleOf, url } from "./base.ts";
import { Chart } from "./chart.ts";
import { Header } from "./header.ts";
import { useDetail, useFleet } from "./live.ts";
import { useMarks } from "./loader.ts";
import { Defs, Legend } from "./marks.ts";
import { Panel } from "./panel.ts";
import { Banner } from "./parts.ts";

/** The rows the filters leave, sorted by id: namespace, group, needs attention, a name's substring. */
function filterRows(sorted: Row[], ns: string, group: string, needsAttention: boolean, name: string): Row[] {
  const needle = name.trim().toLowerCase();
  return sorted.filter(
    (r) =>
      (!ns || r.namespace === ns) &&
      (!group || (r.group !== undefined && `${r.namespace}/${r.group}` === group)) &&
      (!needsAttention || (r.attention !== null && r.attention !== undefined)) &&
      (!needle || r.name.toLowerCase().includes(needle) || (!ns && r.id.toLowerCase().includes(needle))),
  );
}

/** The groups the group filter offers: every lane's and every row's, of the namespace chosen. */
function groupIdsOf(fleet: Fleet | null, rows: Row[], ns: string): string[] {
  const s = new Set<string>((fleet?.groups ?? []).map((g) => g.id));
  for (const r of rows) if (r.group) s.add(`${r.namespace}/${r.group}`);
  return [...s].filter((g) => !ns || g.startsWith(`${ns}/`)).sort();
}

async function postAction(action: Action, id: string): Promise<ActionResult> {
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
}

/** The list's size, followed as the window resizes. */
function useBox(loaded: boolean) {
  const listRef = useRef<HTMLDivElement>(null);
  const [box, setBox] = useState({ width: 900, height: 600 });
  useEffect(() => {
    const el = listRef.current;
    if (!el) return;
    const measure = () => setBox({ width: el.clientWidth, height: el.clientHeight });
    measure();
    const ro = new ResizeObserver(measure);
    ro.observe(el);
    return () => ro.disconnect();
  }, [loaded]);
  return { listRef, box };
}

/** The filters' state, as the header edits it. */
function useFilters() {
  const [ns, setNs] = useState("");
  const [group, setGroup] = useState("");
  const [needsAttention, setNeedsAttention] = useState(false);
  const [name, setName] = useState("");
  return { ns, setNs, group, setGroup, needsAttention, setNeedsAttention, name, setName };
}

/** The fleet's rows and lanes as the filters leave them, and what the header counts and offers of them. */
function useFiltered(fleet: Fleet | null, filters: ReturnType<typeof useFilters>) {
  const { ns, group, needsAttention, name } = filters;
  const rows = fleet?.rows ?? [];
  const sorted = useMemo(() => [...rows].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)), [rows]);
  const namespaces = useMemo(() => [...new Set(rows.map((r) => r.namespace))].sort(), [rows]);
  const groupIds = useMemo(() => groupIdsOf(fleet, rows, ns), [rows, fleet?.groups, ns]);
  const filtered = useMemo(
    () => filterRows(sorted, ns, group, needsAttention, name),
    [sorted, ns, group, needsAttention, name],
  );
  const lanes = useMemo(
    () => (fleet?.groups ?? []).filter((g) => (!ns || g.namespace === ns) && (!group || g.id === group)),
    [fleet?.groups, ns, group],
  );
  const attentionCount = useMemo(() => rows.filter((r) => r.attention).length, [rows]);
  return { rows, namespaces, groupIds, filtered, lanes, attentionCount };
}

/** The header's moves of the time window: by whole spans (k of them), and to a span `s` wide around its middle. */
function windowMoves(setWin: ReturnType<typeof useFleet>["setWin"]) {
  return {
    move: (k: number) => setWin((w) => ({ from: w.from + k * (w.to - w.from), to: w.to + k * (w.to - w.from) })),
    widthTo: (s: number) =>
      setWin((w) => {
        const c = (w.from + w.to) / 2;
        return { from: c - s / 2, to: c + s / 2 };
      }),
  };
}

/** The side panel of the CronJob open in it, with the actions the server allows. */
function panelOf(
  detail: NonNullable<ReturnType<typeof useDetail>["detail"]>,
  rows: Row[],
  fleet: Fleet | null,
  close: () => void,
) {
  return h(Panel, {
    state: detail,
    row: rows.find((r) => r.id === detail.id),
    actions: fleet?.actions ?? false,
    close,
    onAction: postAction,
  });
}

function App(): VNode {
  const filters = useFilters();
  const [scrollTop, setScrollTop] = useState(0);
  const panel = useDetail();
  // The marks' cache, known once made below: a push makes rows' marks stale, a stream back makes all of them.
  const marksRef = useRef<ReturnType<typeof useMarks> | null>(null);
  const { fleet, error, setError, now, win, setWin, toNow, live } = useFleet({
    rowsChanged: (changed, removed) => {
      marksRef.current?.forget([...changed, ...removed]);
      const d = panel.detailRef.current;
      if (d && changed.includes(d.id)) panel.loadDetail(d.id, d.slot, true);
    },
    reloaded: () => marksRef.current?.reset(),
  });
  const { listRef, box } = useBox(fleet !== null);
  const { rows, namespaces, groupIds, filtered, lanes, attentionCount } = useFiltered(fleet, filters);

  const width = Math.max(200, box.width - LABEL_W);
  const scale = useMemo(() => scaleOf(win, width), [win, width]);
  const first = Math.max(0, Math.floor(scrollTop / ROW_H) - OVERSCAN);
  const last = Math.min(filtered.length, Math.ceil((scrollTop + box.height) / ROW_H) + OVERSCAN);
  const visible = filtered.slice(first, last);
  const marks = useMarks(
    win,
    visible.map((r) => r.id),
    setError,
  );
  marksRef.current = marks;

  const showNs = fleet?.scope.allNamespaces ?? false;
  const detail = panel.detail;
  return e(
    "div",
    { class: `app${detail ? " with-panel" : ""}` },
    h(Defs, null),
    h(Header, {
      fleet,
      live,
      filters,
      showNs,
      namespaces,
      groupIds,
      attentionCount,
      shown: filtered.length,
      all: rows.length,
      span: win.to - win.from,
      ...windowMoves(setWin),
      toNow,
    }),
    h(Banner, { fleet, error }),
    h(Legend, null),
    e(
      "div",
      { class: "body" },
      h(Chart, {
        win,
        width,
        now,
        scale,
        lanes,
        filtered,
        visible,
        first,
        loaded: fleet !== null,
        anyRows: rows.length > 0,
        marksOf: marks.get,
        showNs,
        selected: detail?.id,
        open: panel.loadDetail,
        listRef,
        onScroll: setScrollTop,
      }),
      detail ? panelOf(detail, rows, fleet, panel.close) : null,
    ),
  );
}

const mount = document.getElementById("app");
if (mount) render(h(App, null), mount);
