// The fleet as the page holds it: read once, then kept by the server's pushes (server-sent events), with the
// server's clock; and the side panel's CronJob, read again when a push changes it.
import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { type Detail, type Fleet, PATHS, type Push, PAGE_WORDS as W } from "../view.ts";
import { getJSON, HOUR, ms, url, type Win } from "./base.ts";
import type { DetailState } from "./panel.ts";
import { type Live, mergeLanes, mergeRows } from "./parts.ts";

/** The side panel's state and how to open it (`quiet`: a refresh that keeps what is shown until it comes). */
export function useDetail() {
  const [detail, setDetail] = useState<DetailState | null>(null);
  const detailRef = useRef<DetailState | null>(null);
  detailRef.current = detail;
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
  return { detail, detailRef, loadDetail, close: () => setDetail(null) };
}

/** What a push changed that the page holds beside the fleet: rows whose marks are stale, a stream that came back. */
interface FleetHooks {
  /** Rows changed or removed: their marks are read again. */
  rowsChanged(changed: string[], removed: string[]): void;
  /** The stream is back after a break: the marks of every row are read again. */
  reloaded(): void;
}

/**
 * The fleet, its error, the server's now (ticking every 30 s) and the window (the day before and after now, once
 * the fleet is read), and the live stream's state.
 */
export function useFleet(hooks: FleetHooks) {
  const [fleet, setFleet] = useState<Fleet | null>(null);
  const [error, setError] = useState<string | null>(null);
  // The server's clock, not the browser's: a skewed laptop would draw "now" where the runs are not.
  const skew = useRef(0);
  const [now, setNow] = useState(Date.now());
  const [win, setWin] = useState<Win>(() => ({ from: Date.now() - 24 * HOUR, to: Date.now() + 24 * HOUR }));
  const [live, setLive] = useState<Live>("connecting");
  const hooksRef = useRef(hooks);
  hooksRef.current = hooks;

  useEffect(() => {
    getJSON<Fleet>(url(PATHS.fleet))
      .then((f) => {
        skew.current = ms(f.now) - Date.now();
        const n = ms(f.now);
        setNow(n);
        setWin({ from: n - 24 * HOUR, to: n + 24 * HOUR });
        setFleet(f);
        // The first screen came alone: the rest once the server has read it. Its rows' marks are read again from
        // what the rest was read with.
        if (!f.partial) return;
        getJSON<Fleet>(url(PATHS.fleet, { whole: "1" }))
          .then((whole) => {
            skew.current = ms(whole.now) - Date.now();
            setFleet(whole);
            hooksRef.current.rowsChanged(
              f.rows.map((r) => r.id),
              [],
            );
          })
          .catch((err: unknown) => setError(W.couldNotLoad("the fleet", String(err))));
      })
      .catch((err: unknown) => setError(W.couldNotLoad("the fleet", String(err))));
    const timer = setInterval(() => setNow(Date.now() + skew.current), 30_000);
    return () => clearInterval(timer);
  }, []);

  // Live updates, once the fleet is loaded (a push before it would have nothing to merge into).
  const loaded = fleet !== null;
  useEffect(() => {
    if (!loaded) return;
    const apply = (push: Push) => applyPush(push, { setFleet, setNow, skew, hooks: hooksRef });
    const reread = () => {
      getJSON<Fleet>(url(PATHS.fleet))
        .then((f) => {
          skew.current = ms(f.now) - Date.now();
          setFleet(f);
          hooksRef.current.reloaded();
        })
        .catch((err: unknown) => setError(W.couldNotLoad("the fleet", String(err))));
    };
    return follow(apply, setLive, reread);
  }, [loaded]);

  const toNow = () => {
    const n = Date.now() + skew.current;
    setNow(n);
    setWin((w) => ({ from: n - (w.to - w.from) / 2, to: n + (w.to - w.from) / 2 }));
  };
  return { fleet, error, setError, now, win, setWin, toNow, live };
}

/** What a push changes: the fleet held, the server's clock, and what the page holds beside them (FleetHooks). */
interface PushTargets {
  setFleet: (update: (f: Fleet | null) => Fleet | null) => void;
  setNow: (now: number) => void;
  skew: { current: number };
  hooks: { current: FleetHooks };
}

/** A push merged into the fleet: rows and lanes changed (with the server's clock), the verdicts, the unreadable. */
function applyPush(push: Push, t: PushTargets): void {
  if (push.type === "changed") {
    t.skew.current = ms(push.now) - Date.now();
    t.setNow(ms(push.now));
    t.setFleet(
      (f) =>
        f && {
          ...f,
          rows: mergeRows(f.rows, push.rows, push.removed),
          groups: mergeLanes(f.groups, push.groups, push.laneNamespaces),
        },
    );
    t.hooks.current.rowsChanged(
      push.rows.map((r) => r.id),
      push.removed,
    );
  } else if (push.type === "verdicts") {
    t.setFleet(
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
    t.setFleet((f) => f && { ...f, unreadable: push.unreadable });
  }
}

/**
 * The server's pushes, applied as they come; what changed while the stream was down was pushed to nobody, so a
 * stream that comes back reads the fleet again (`reread`). Returns the stop.
 */
function follow(apply: (p: Push) => void, setLive: (l: Live) => void, reread: () => void): () => void {
  let es: EventSource | undefined;
  let retry: ReturnType<typeof setTimeout> | undefined;
  let down = false;
  const connect = () => {
    es = new EventSource(url(PATHS.events));
    es.onopen = () => {
      setLive("live");
      if (down) {
        down = false;
        reread();
      }
    };
    es.onerror = () => {
      down = true;
      setLive("reconnecting");
      // The browser retries by itself, except after an error status (a server restarting, a proxy): then it
      // gives up, and the page tries again a little later.
      if (es?.readyState === EventSource.CLOSED) retry = setTimeout(connect, 5000);
    };
    es.onmessage = (ev: MessageEvent<string>) => {
      let push: Push;
      try {
        push = JSON.parse(ev.data) as Push;
      } catch {
        return;
      }
      setLive("live");
      apply(push);
    };
  };
  connect();
  return () => {
    clearTimeout(retry);
    es?.close();
  };
}
