// Exact-path routing (the http.ServeMux controller-runtime registers each webhook on): a registered path
// goes to its handler, anything else gets Go's plain-text 404, or the server's handler for unserved paths when it
// has one. The table is read on every request, so a path added after start is served (controller-runtime's
// Register after Start).
import type { Logger } from "../log.ts";
import { send, type Incoming, type Outgoing } from "./http.ts";

/** Serves a request whose path is registered; `path` is the registered one, without the query. */
export type Route<H> = (path: string, handler: H, req: Incoming, res: Outgoing) => void;

/** Throws for a path a request can never match, so a typo fails at start instead of as 404s. */
export function checkPaths(paths: Iterable<string>): void {
  for (const path of paths) {
    if (!path.startsWith("/")) throw new Error(`webhook path ${JSON.stringify(path)} must start with "/"`);
  }
}

/** The path of a request target; the apiserver appends "?timeout=10s", which must not affect routing. */
export function requestPath(url: string | undefined): string {
  const target = url ?? "/";
  const q = target.indexOf("?");
  return q < 0 ? target : target.slice(0, q);
}

export function newRouter<H>(
  handlers: ReadonlyMap<string, H>,
  route: Route<H>,
  logger: Logger,
  /** The handler of a path no entry serves (none: 404). */
  unserved?: (path: string) => H,
): (req: Incoming, res: Outgoing) => void {
  return (req, res) => {
    const path = requestPath(req.url);
    const handler = handlers.get(path) ?? unserved?.(path);
    if (handler === undefined) {
      send(res, 404, "404 page not found\n", { "content-type": "text/plain; charset=utf-8" }, logger);
      return;
    }
    route(path, handler, req, res);
  };
}
