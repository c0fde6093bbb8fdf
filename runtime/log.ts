// Structured logging shaped like controller-runtime's logr/zap output, so dashboards and log queries
// written for Go operators (level, ts, logger, msg, controller, reconcileID, error, stacktrace) work
// unchanged. winston does the I/O; the record itself is built here because winston's own meta merging
// drops Error properties (message and stack are non-enumerable).
import type { Writable } from "node:stream";
import winston from "winston";

export type LogLevel = "debug" | "info" | "warn" | "error";
export type KeyValues = Readonly<Record<string, unknown>>;

export interface Logger {
  /** The threshold of the underlying sink (shared by every logger derived from it). */
  readonly level: LogLevel;
  enabled(level: LogLevel): boolean;
  debug(msg: string, kv?: KeyValues): void;
  info(msg: string, kv?: KeyValues): void;
  warn(msg: string, kv?: KeyValues): void;
  /**
   * logr's Error(err, msg, kv...) with the message first. `err` is the error the record is about
   * (undefined when there is none): its message goes to "error", an Error's stack to "stacktrace", and
   * anything else (a plain object included) is written as the error, JSON-encoded.
   */
  error(msg: string, err: unknown, kv?: KeyValues): void;
  /** Appends a name segment, joined with "." like logr ("controller-runtime" + "manager"). */
  withName(name: string): Logger;
  /** A child logger that adds these key/values to every record (call-site values win on clashes). */
  withValues(kv: KeyValues): Logger;
}

export interface LoggerOptions {
  /** A level name, or a zap-style verbosity (0 = info, 1 and above = debug). */
  level?: LogLevel | number;
  format?: "json" | "console";
  /** Defaults to process.stderr, where controller-runtime writes its logs. */
  stream?: Writable;
}

const LOG_LEVELS: readonly LogLevel[] = ["debug", "info", "warn", "error"];

// winston's convention: lower is more severe, a record is written when its number <= the threshold's.
const SEVERITY: Record<LogLevel, number> = { error: 0, warn: 1, info: 2, debug: 3 };

function isLogLevel(s: string): s is LogLevel {
  return (LOG_LEVELS as readonly string[]).includes(s);
}

function badLevel(got: string): Error {
  return new Error(`--log-level must be one of debug, info, warn, error (or a non-negative integer); got ${got}`);
}

function levelFromVerbosity(v: number, shown: string): LogLevel {
  if (!Number.isSafeInteger(v) || v < 0) throw badLevel(shown);
  // zap has finer debug levels (V(2), V(3)...); winston has one, so every V(n >= 1) is "debug".
  return v === 0 ? "info" : "debug";
}

/** Parses a --log-level flag value; throws an error naming the value when it is not understood. */
export function parseLogLevel(s: string): LogLevel {
  const v = s.trim().toLowerCase();
  if (isLogLevel(v)) return v;
  if (v === "warning") return "warn";
  if (/^\d+$/.test(v)) return levelFromVerbosity(Number(v), JSON.stringify(s));
  throw badLevel(JSON.stringify(s));
}

function resolveLevel(level: LogLevel | number | undefined): LogLevel {
  if (level === undefined) return "info";
  if (typeof level === "number") return levelFromVerbosity(level, String(level));
  if (isLogLevel(level)) return level;
  throw badLevel(JSON.stringify(level));
}

// ---------------------------------------------------------------------------------------------------
// Record building

const MESSAGE = Symbol.for("message"); // triple-beam's key: what winston's transports actually write
const RECORD = Symbol("record");
// Keys the record's header owns; a caller's key/value with one of these names is renamed rather than
// allowed to overwrite the header (zap would emit a duplicate JSON key, which most parsers collapse).
const RESERVED = new Set(["level", "ts", "logger", "msg"]);

type LogRecord = Record<string, unknown>;

function errorText(err: unknown): string {
  if (err instanceof Error) return err.message;
  if (typeof err === "string") return err;
  return safeJSON(err) ?? String(err);
}

/** The stack plus its `cause` chain, which Node's err.stack leaves out. */
function stackOf(err: Error): string | undefined {
  let out = err.stack;
  let cause: unknown = err.cause;
  for (let depth = 0; cause !== undefined && depth < 8; depth++) {
    const text = cause instanceof Error ? (cause.stack ?? cause.message) : errorText(cause);
    out = `${out ?? err.message}\nCaused by: ${text}`;
    cause = cause instanceof Error ? cause.cause : undefined;
  }
  return out;
}

function addFields(record: LogRecord, kv: KeyValues | undefined, errs: Error[]): void {
  if (!kv) return;
  for (const [k, v] of Object.entries(kv)) {
    const key = RESERVED.has(k) ? `_${k}` : k;
    if (v instanceof Error) {
      record[key] = v.message;
      errs.push(v);
    } else {
      record[key] = v;
    }
  }
}

function jsonReplacer(_key: string, v: unknown): unknown {
  if (typeof v === "bigint") return v.toString();
  if (v instanceof Error) return v.message;
  if (v instanceof Map) return Object.fromEntries(v);
  if (v instanceof Set) return [...v];
  return v;
}

/** JSON that never throws: a log call must not fail because a value is circular or a BigInt. */
function safeJSON(value: unknown, indent?: string): string | undefined {
  try {
    return JSON.stringify(value, jsonReplacer, indent);
  } catch {
    const seen = new WeakSet<object>();
    try {
      return JSON.stringify(
        value,
        (k, v: unknown) => {
          const r = jsonReplacer(k, v);
          if (typeof r === "object" && r !== null) {
            if (seen.has(r)) return "[Circular]";
            seen.add(r);
          }
          return r;
        },
        indent,
      );
    } catch (e) {
      return JSON.stringify({ logEncodingError: e instanceof Error ? e.message : String(e) });
    }
  }
}

// ---------------------------------------------------------------------------------------------------
// Output formats

const jsonFormat = winston.format((info) => {
  info[MESSAGE] = safeJSON(info[RECORD]);
  return info;
});

const COLOURS: Record<LogLevel, string> = { debug: "35", info: "34", warn: "33", error: "31" };

// zap's development encoder: tab-separated header columns, the remaining fields as JSON, the
// stacktrace on its own lines so it reads as a stack rather than one escaped string.
function consoleFormat(colour: boolean) {
  return winston.format((info) => {
    const { level, ts, logger, msg, stacktrace, ...rest } = info[RECORD] as LogRecord;
    const upper = String(level).toUpperCase();
    const cols = [String(ts), colour ? `\x1b[${COLOURS[level as LogLevel]}m${upper}\x1b[0m` : upper];
    if (logger !== undefined) cols.push(String(logger));
    cols.push(String(msg));
    if (Object.keys(rest).length > 0) cols.push(safeJSON(rest) ?? "");
    let line = cols.join("\t");
    if (typeof stacktrace === "string") line += `\n${stacktrace}`;
    info[MESSAGE] = line;
    return info;
  });
}

// ---------------------------------------------------------------------------------------------------
// Loggers

interface Sink {
  readonly winston: winston.Logger;
  readonly level: LogLevel;
}

class SinkLogger implements Logger {
  readonly #sink: Sink;
  readonly #name: string;
  readonly #values: KeyValues | undefined;

  constructor(sink: Sink, name: string, values: KeyValues | undefined) {
    this.#sink = sink;
    this.#name = name;
    this.#values = values;
  }

  get level(): LogLevel {
    return this.#sink.level;
  }

  enabled(level: LogLevel): boolean {
    return SEVERITY[level] <= SEVERITY[this.#sink.level];
  }

  debug(msg: string, kv?: KeyValues): void {
    this.#emit("debug", msg, undefined, kv);
  }

  info(msg: string, kv?: KeyValues): void {
    this.#emit("info", msg, undefined, kv);
  }

  warn(msg: string, kv?: KeyValues): void {
    this.#emit("warn", msg, undefined, kv);
  }

  error(msg: string, err: unknown, kv?: KeyValues): void {
    this.#emit("error", msg, err, kv);
  }

  withName(name: string): Logger {
    return new SinkLogger(this.#sink, this.#name ? `${this.#name}.${name}` : name, this.#values);
  }

  withValues(kv: KeyValues): Logger {
    return new SinkLogger(this.#sink, this.#name, { ...this.#values, ...kv });
  }

  #emit(level: LogLevel, msg: string, err: unknown, kv: KeyValues | undefined): void {
    if (!this.enabled(level)) return;
    const record: LogRecord = { level, ts: new Date().toISOString() };
    if (this.#name) record.logger = this.#name;
    record.msg = msg;
    const errs: Error[] = [];
    addFields(record, this.#values, errs);
    addFields(record, kv, errs);
    if (err !== undefined && err !== null) {
      record.error = errorText(err);
      if (err instanceof Error) errs.unshift(err);
    }
    const first = errs[0];
    if (first) {
      const stack = stackOf(first);
      if (stack !== undefined) record.stacktrace = stack;
    }
    this.#sink.winston.log({ level, message: msg, [RECORD]: record });
  }
}

/** A new root logger writing to its own stream. */
export function createLogger(opts: LoggerOptions = {}): Logger {
  const level = resolveLevel(opts.level);
  const stream = opts.stream ?? process.stderr;
  const format = opts.format ?? "json";
  if (format !== "json" && format !== "console") {
    throw new Error(`--log-format must be one of json, console; got ${JSON.stringify(format)}`);
  }
  const isTTY = (stream as { isTTY?: boolean }).isTTY === true;
  const colour = isTTY && !process.env.NO_COLOR;
  const w = winston.createLogger({
    levels: SEVERITY,
    level,
    format: format === "json" ? jsonFormat() : consoleFormat(colour)(),
    transports: [new winston.transports.Stream({ stream })],
    exitOnError: false,
  });
  // A broken log pipe (EPIPE on stderr) must not take the operator down with an unhandled 'error'.
  w.on("error", () => {});
  return new SinkLogger({ winston: w, level }, "", undefined);
}

/** logr.Discard(): accepts everything, writes nothing. */
export const discardLogger: Logger = {
  level: "error",
  enabled: () => false,
  debug: () => {},
  info: () => {},
  warn: () => {},
  error: () => {},
  withName: () => discardLogger,
  withValues: () => discardLogger,
};

// ---------------------------------------------------------------------------------------------------
// The process-wide default (controller-runtime's log.Log + log.SetLogger)

let current: Logger | undefined;

function currentLogger(): Logger {
  current ??= createLogger();
  return current;
}

type Step = { name: string } | { values: KeyValues };

// Modules take `log.withName("x")` at import time, before main has parsed --log-level and called
// setDefaultLogger; delegating on every call keeps those early children pointed at the final sink.
class DelegatingLogger implements Logger {
  readonly #steps: readonly Step[];
  #resolvedFor: Logger | undefined;
  #resolved: Logger | undefined;

  constructor(steps: readonly Step[]) {
    this.#steps = steps;
  }

  /** The concrete logger this one currently writes through. */
  resolve(): Logger {
    const root = currentLogger();
    if (this.#resolvedFor !== root || !this.#resolved) {
      let l = root;
      for (const s of this.#steps) l = "name" in s ? l.withName(s.name) : l.withValues(s.values);
      this.#resolvedFor = root;
      this.#resolved = l;
    }
    return this.#resolved;
  }

  get level(): LogLevel {
    return this.resolve().level;
  }

  enabled(level: LogLevel): boolean {
    return this.resolve().enabled(level);
  }

  debug(msg: string, kv?: KeyValues): void {
    this.resolve().debug(msg, kv);
  }

  info(msg: string, kv?: KeyValues): void {
    this.resolve().info(msg, kv);
  }

  warn(msg: string, kv?: KeyValues): void {
    this.resolve().warn(msg, kv);
  }

  error(msg: string, err: unknown, kv?: KeyValues): void {
    this.resolve().error(msg, err, kv);
  }

  withName(name: string): Logger {
    return new DelegatingLogger([...this.#steps, { name }]);
  }

  withValues(kv: KeyValues): Logger {
    return new DelegatingLogger([...this.#steps, { values: kv }]);
  }
}

/** The default logger: info, JSON, stderr until setDefaultLogger is called. */
export const log: Logger = new DelegatingLogger([]);

/** Replaces the sink behind `log` and every logger already derived from it. */
export function setDefaultLogger(logger: Logger): void {
  // Flatten a delegating logger, or `log` would end up delegating to itself.
  current = logger instanceof DelegatingLogger ? logger.resolve() : logger;
}
