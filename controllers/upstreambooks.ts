// status.upstreams, the after row's books: for each upstream, the newest of its runs this CronJob has decided about
// (by its end, then its Job's name). Written by the after row for each run after an upstream's run and by its join
// (trigger-join.ts) for every upstream at once, the one way: a book only ever moves forward. Pure.
import type { CronJobWireStatus } from "../api/v1/index.ts";

export type UpstreamBook = NonNullable<CronJobWireStatus["upstreams"]>[number];

/** The book of `upstream` (none: nothing decided about it yet). */
export const bookOf = (status: Readonly<CronJobWireStatus> | undefined, upstream: string) =>
  status?.upstreams?.find((b) => b.cronJob === upstream);

/** Whether `b` is past `a`: a later end, or the same end and a later Job's name. */
function past(b: UpstreamBook, a: UpstreamBook): boolean {
  const d = Date.parse(b.lastEnded) - Date.parse(a.lastEnded);
  return d > 0 || (d === 0 && (b.lastJob ?? "") > (a.lastJob ?? ""));
}

/** status.upstreams with each of `books` taken where its upstream has no book yet or it is past the one there. */
export function withUpstreamBooks(
  status: Readonly<CronJobWireStatus>,
  books: readonly UpstreamBook[],
): CronJobWireStatus {
  const byName = new Map((status.upstreams ?? []).map((b) => [b.cronJob, b]));
  let moved = false;
  for (const b of books) {
    const old = byName.get(b.cronJob);
    if (old && !past(b, old)) continue;
    byName.set(b.cronJob, b);
    moved = true;
  }
  if (!moved) return { ...status };
  return { ...status, upstreams: [...byName.values()].sort((a, b) => a.cronJob.localeCompare(b.cronJob)) };
}
