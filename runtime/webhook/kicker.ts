// How a runnable that keeps objects in a state waits between passes: a resync interval, cut short by a kick (a watch
// event) — a short debounce after the first, so a burst of events (a rollout's EndpointSlices, a re-applied
// configuration) brings one pass, not one each — or by its stop.

/** Longest timer Node accepts (about 24.8 days). */
const MAX_TIMER_MS = 2 ** 31 - 1;

export class Kicker {
  private kicked = false;
  private wake: (() => void) | undefined;

  /** Asks for a pass soon (after the sleeper's debounce). */
  kick(): void {
    this.kicked = true;
    this.wake?.();
  }

  /** A pass starts: the kicks so far are answered by it. */
  passStarts(): void {
    this.kicked = false;
  }

  /** Sleeps `ms`, or `debounceMs` after a kick (also one made during the pass before), or until the signal aborts. */
  sleep(ms: number, debounceMs: number, signal: AbortSignal): Promise<void> {
    return new Promise<void>((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener("abort", done);
        this.wake = undefined;
        resolve();
      };
      if (signal.aborted) return done();
      signal.addEventListener("abort", done, { once: true });
      const onKick = () => {
        clearTimeout(timer);
        this.wake = undefined;
        timer = setTimeout(done, debounceMs);
      };
      if (this.kicked) onKick();
      else {
        timer = setTimeout(done, Math.min(ms, MAX_TIMER_MS));
        this.wake = onKick;
      }
    });
  }
}
