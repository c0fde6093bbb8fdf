// The reconciler's notion of "now", injectable so tests can move time (the kubebuilder tutorial's Clock).

export interface Clock {
  now(): Date;
}

export const realClock: Clock = { now: () => new Date() };

/** A clock tests set and advance by hand. */
export class FakeClock implements Clock {
  private t: number;
  constructor(start: Date | string) {
    this.t = new Date(start).getTime();
  }
  now(): Date {
    return new Date(this.t);
  }
  set(t: Date | string): void {
    this.t = new Date(t).getTime();
  }
  advance(ms: number): void {
    this.t += ms;
  }
}
