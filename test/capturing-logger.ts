// A runtime Logger that keeps its records in memory, for tests that assert on what was logged.
import type { KeyValues, Logger, LogLevel } from "../runtime/log.ts";

export interface LogLine {
  level: LogLevel;
  /** withName segments joined with "." ("" for the root). */
  logger: string;
  msg: string;
  /** error()'s error argument (undefined for the other levels). */
  err: unknown;
  /** withValues key/values merged with the call's. */
  kv: Record<string, unknown>;
}

export class CapturingLogger implements Logger {
  readonly level: LogLevel = "debug";
  readonly lines: LogLine[];
  readonly #name: string;
  readonly #values: KeyValues;

  constructor(lines: LogLine[] = [], name = "", values: KeyValues = {}) {
    this.lines = lines;
    this.#name = name;
    this.#values = values;
  }

  enabled(): boolean {
    return true;
  }

  debug(msg: string, kv?: KeyValues): void {
    this.#push("debug", msg, undefined, kv);
  }

  info(msg: string, kv?: KeyValues): void {
    this.#push("info", msg, undefined, kv);
  }

  warn(msg: string, kv?: KeyValues): void {
    this.#push("warn", msg, undefined, kv);
  }

  error(msg: string, err: unknown, kv?: KeyValues): void {
    this.#push("error", msg, err, kv);
  }

  withName(name: string): Logger {
    return new CapturingLogger(this.lines, this.#name ? `${this.#name}.${name}` : name, this.#values);
  }

  withValues(kv: KeyValues): Logger {
    return new CapturingLogger(this.lines, this.#name, { ...this.#values, ...kv });
  }

  /** The messages logged at this level. */
  at(level: LogLevel): string[] {
    return this.lines.filter((l) => l.level === level).map((l) => l.msg);
  }

  /** The error records as one line each: message, error message and key/values (JSON). */
  errors(): string[] {
    return this.lines
      .filter((l) => l.level === "error")
      .map((l) => `${l.msg}: ${l.err instanceof Error ? l.err.message : String(l.err)} ${JSON.stringify(l.kv)}`);
  }

  #push(level: LogLevel, msg: string, err: unknown, kv: KeyValues | undefined): void {
    this.lines.push({ level, logger: this.#name, msg, err, kv: { ...this.#values, ...kv } });
  }
}
