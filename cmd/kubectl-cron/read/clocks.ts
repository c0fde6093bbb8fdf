// The clocks a diagnosis is made at, and how a read that may fail is made: its failure noted (unreadable), not
// thrown, so a user who may not read everything is still told what could be read.
import type { Client } from "../../../runtime/client.ts";
import { APIError } from "../../../runtime/errors.ts";
import type { WhyFacts } from "../model/facts.ts";

export type Reader = Pick<Client, "get" | "list" | "request">;

/** A read that may fail: its result, or undefined with the failure noted. */
export type Attempt = <T>(what: string, read: () => Promise<T>) => Promise<T | undefined>;

/** The API server's clock and this machine's, read together, with the reads that failed noted in `unreadable`. */
export async function readClocks(
  client: Reader,
  unreadable: string[],
  localClock: () => Date = () => new Date(),
): Promise<{ now: Date; localNow: Date; serverClock: boolean; attempt: Attempt }> {
  const attempt: Attempt = async (what, read) => {
    try {
      return await read();
    } catch (e) {
      const why = e instanceof APIError && e.reason === "Forbidden" ? "forbidden" : (e as Error).message;
      unreadable.push(`${what}: ${why}`);
      return undefined;
    }
  };
  let serverNow: Date | undefined;
  let localNow = localClock();
  await attempt("the API server's clock", () =>
    client.request("GET", "/version", {
      onDate: (d) => {
        serverNow = d;
        localNow = localClock();
      },
    }),
  );
  return { now: serverNow ?? localNow, localNow, serverClock: serverNow !== undefined, attempt };
}

/** The clocks, and how the reads that follow note a failure. */
export type Clocks = Pick<WhyFacts, "now" | "localNow" | "serverClock"> & { attempt: Attempt };

/** A read started ahead of the one awaited first: its outcome kept (no rejection left unhandled meanwhile). */
type Early<T> = Promise<{ ok: true; value: T } | { ok: false; error: unknown }>;
export const early = <T>(read: () => Promise<T>): Early<T> =>
  (async () => read())().then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );
/** An early read's value, or its error thrown (where it is awaited, so `attempt` says it in its place). */
export async function settled<T>(read: Early<T>): Promise<T> {
  const r = await read;
  if (!r.ok) throw r.error;
  return r.value;
}
