// The marks of the rows in view, read from the server for the window shown and kept by id: a new window starts a new
// generation (answers of an old one are dropped), a push makes a row's marks stale (drawn until the new ones come:
// a row does not blink empty at every change), a failed read is not repeated.
import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { MAX_MARK_IDS, type RowMarks, PAGE_WORDS as W } from "../view.ts";
import { getJSON, marksURL, type Win } from "./base.ts";

export function useMarks(win: Win, visibleIds: readonly string[], setError: (e: string) => void) {
  const cache = useRef(new Map<string, RowMarks>());
  const pending = useRef(new Set<string>());
  const failed = useRef(new Set<string>());
  /** Rows whose cached marks a push made stale: read again, drawn meanwhile. */
  const stale = useRef(new Set<string>());
  const gen = useRef(0);
  const [version, setVersion] = useState(0);
  const bump = useCallback(() => setVersion((v) => v + 1), []);
  const reset = useCallback(() => {
    gen.current++;
    cache.current = new Map();
    pending.current = new Set();
    failed.current = new Set();
    stale.current = new Set();
    bump();
  }, [bump]);
  const forget = useCallback(
    (ids: readonly string[]) => {
      for (const id of ids) {
        // Also one being read: its answer may predate the change, so it is read once more after it.
        if (cache.current.has(id) || pending.current.has(id)) stale.current.add(id);
        failed.current.delete(id);
      }
      bump();
    },
    [bump],
  );

  // The window changed: the cached marks are of another window.
  useEffect(() => reset(), [win, reset]);

  // Ask for the marks of the rows in view that have none for this window, a moment after scrolling stops (the first
  // screen's at once: nothing scrolls yet).
  const visibleKey = visibleIds.join("\n");
  useEffect(() => {
    const first = cache.current.size === 0 && pending.current.size === 0;
    const timer = setTimeout(
      () => {
        const g = gen.current;
        const ids = toRead(visibleKey.split("\n"), {
          cache: cache.current,
          stale: stale.current,
          pending: pending.current,
          failed: failed.current,
        });
        for (let i = 0; i < ids.length; i += MAX_MARK_IDS) {
          const chunk = ids.slice(i, i + MAX_MARK_IDS);
          for (const id of chunk) {
            pending.current.add(id);
            stale.current.delete(id);
          }
          getJSON<RowMarks[]>(marksURL(win.from, win.to, chunk))
            .then((list) => {
              if (g !== gen.current) return;
              for (const m of list) cache.current.set(m.id, m);
              for (const id of chunk) {
                pending.current.delete(id);
                // An id the server did not answer for has no marks in this window: draw it empty, do not ask again.
                if (!cache.current.has(id)) cache.current.set(id, { id, marks: [], shades: [] });
              }
              bump();
            })
            .catch((err: unknown) => {
              if (g !== gen.current) return;
              for (const id of chunk) {
                pending.current.delete(id);
                failed.current.add(id);
              }
              setError(W.couldNotLoad("marks", String(err)));
            });
        }
      },
      first ? 0 : 100,
    );
    return () => clearTimeout(timer);
  }, [visibleKey, win, version, bump, setError]);

  return { get: (id: string) => cache.current.get(id), forget, reset };
}

/** The rows in view whose marks are to be read: none cached (or a push made them stale), none asked, none failed. */
function toRead(
  ids: readonly string[],
  o: { cache: Map<string, RowMarks>; stale: Set<string>; pending: Set<string>; failed: Set<string> },
): string[] {
  return ids.filter((id) => id && (!o.cache.has(id) || o.stale.has(id)) && !o.pending.has(id) && !o.failed.has(id));
}
