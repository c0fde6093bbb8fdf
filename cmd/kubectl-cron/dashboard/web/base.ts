// What every part of the page shares: the element helper, the row geometry, the server's URLs (each with the token)
// and its JSON, and time on the axis (a window, its scale, the browser's formats).
import { h, type ComponentChildren, type VNode } from "preact";
import { PATHS } from "../view.ts";

/** h for DOM and SVG elements by tag name, with their attributes (data-* included) as plain props. */
export function e(tag: string, props: Record<string, unknown> | null, ...children: ComponentChildren[]): VNode {
  return h(tag, props, ...children);
}

export const ROW_H = 26;
export const LABEL_W = 300;
/** Rows drawn beyond each edge of the view, so a short scroll shows rows already drawn. */
export const OVERSCAN = 8;
export const HOUR = 3_600_000;
export const MINUTE = 60_000;
export const WIDTHS = [
  // Minute schedules: at 12h and wider, their slots to come merge into bands (marks.ts).
  { label: "15m", ms: 15 * MINUTE },
  { label: "1h", ms: HOUR },
  { label: "12h", ms: 12 * HOUR },
  { label: "48h", ms: 48 * HOUR },
  { label: "7d", ms: 7 * 24 * HOUR },
] as const;
export const MIN_BAR = 3;

const token = new URLSearchParams(location.search).get("token") ?? "";

export function url(path: string, params: Record<string, string> = {}): string {
  const q = new URLSearchParams({ token, ...params });
  return `${path}?${q.toString()}`;
}

export async function getJSON<T>(href: string): Promise<T> {
  const res = await fetch(href, { headers: { Accept: "application/json" } });
  if (!res.ok) throw new Error(`${res.status} ${res.statusText}: ${(await res.text()).trim()}`);
  return (await res.json()) as T;
}

/** The ids stay literal commas between encoded ids: the server splits on them before decoding. */
export function marksURL(from: number, to: number, ids: string[]): string {
  const base = url(PATHS.marks, { from: new Date(from).toISOString(), to: new Date(to).toISOString() });
  return `${base}&ids=${ids.map(encodeURIComponent).join(",")}`;
}

export const ms = (s: string): number => Date.parse(s);

export interface Win {
  from: number;
  to: number;
}

/** Maps a time to a pixel of the track. */
export type Scale = (t: number) => number;

export function scaleOf(win: Win, width: number): Scale {
  const k = width / (win.to - win.from);
  return (t) => (t - win.from) * k;
}

export const timeFmt = new Intl.DateTimeFormat(undefined, { hour: "2-digit", minute: "2-digit" });
export const dayFmt = new Intl.DateTimeFormat(undefined, { weekday: "short", day: "numeric", month: "short" });
export const fullFmt = new Intl.DateTimeFormat(undefined, {
  weekday: "short",
  day: "numeric",
  month: "short",
  hour: "2-digit",
  minute: "2-digit",
});

/** Tick steps in minutes; the first at least ~80px apart is used. */

export const MID = ROW_H / 2;
