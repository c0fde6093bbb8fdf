// client-go's record.FakeRecorder: keeps "<type> <reason> <message>" strings so controller unit tests
// can assert on the events a reconcile emitted without a server or a background writer.
import { sprintf } from "./format.ts";
import type { EventOptions, EventSubject, EventType, Recorder } from "./types.ts";

interface FakeRecorderOptions {
  /** Append " involvedObject{kind=...,apiVersion=...}" like client-go's IncludeObject. */
  includeObject?: boolean;
  /** Keep at most this many (oldest dropped first); client-go's buffered channel size. Default unbounded. */
  capacity?: number;
}

export class FakeRecorder implements Recorder {
  readonly events: string[] = [];
  /** The events recorded as routine (EventOptions.routine), in the same "<type> <reason> <message>" form. */
  readonly routine: string[] = [];
  readonly #includeObject: boolean;
  readonly #capacity: number;

  constructor(opts: FakeRecorderOptions = {}) {
    this.#includeObject = opts.includeObject ?? false;
    this.#capacity = opts.capacity ?? Infinity;
  }

  event(obj: EventSubject, type: EventType, reason: string, message: string, o: EventOptions = {}): void {
    if (o.routine) this.routine.push(`${type} ${reason} ${message}`);
    let line = `${type} ${reason} ${message}`;
    if (this.#includeObject) {
      line += ` involvedObject{kind=${obj.kind ?? ""},apiVersion=${obj.apiVersion ?? ""}}`;
    }
    this.events.push(line);
    if (this.events.length > this.#capacity) this.events.shift();
  }

  eventf(obj: EventSubject, type: EventType, reason: string, fmt: string, ...args: unknown[]): void {
    this.event(obj, type, reason, sprintf(fmt, ...args));
  }

  /** Return the recorded events and forget them. */
  take(): string[] {
    this.routine.splice(0, this.routine.length);
    return this.events.splice(0, this.events.length);
  }

  async flush(): Promise<void> {}

  shutdown(): void {}
}
