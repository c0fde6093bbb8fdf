// `kubectl cron dashboard [-n NS | -A]`: the fleet on a page served on 127.0.0.1 from the user's own kubeconfig
// (nothing runs in the cluster). The page's data comes from the plugin's readers (FleetSource, marks.ts); one
// CronJob's panel is read once (read/whyfacts.ts readOne) and answered as `why`, `history` and `next` answer
// (answer/answers.ts); the actions are the writes `run`, `suspend` and `resume` make (write/writes.ts). Loaded only by this
// command (main.ts imports it on demand). It imports no command module: only the readers, the answers, the writes and
// its own parts.
import { spawn } from "node:child_process";
import type { Args } from "../model/args.ts";
import type { Context, Output } from "../model/context.ts";
import { historyAnswer, nextAnswer, slotOf, whyAnswer } from "../answer/answers.ts";
import { readOne } from "../read/whyfacts.ts";
import { requestRun, setSuspend } from "../write/writes.ts";
import { pageAssets, pageHTML } from "./assets.ts";
import { serve, type Handlers } from "./server.ts";
import { FleetSource } from "./source.ts";
import type { Action, ActionResult, Detail } from "./view.ts";

/** An error as the page shows it, as the command would print it. */
const errorText = (e: unknown) => `error: ${e instanceof Error ? e.message : String(e)}\n`;

/** What an answer prints, or its error, as the page shows it. */
function printed(answer: () => Output): { text: string; json?: unknown } {
  try {
    const out = answer();
    return { text: out.text + (out.notes ?? []).map((n) => `${n}\n`).join(""), json: out.json };
  } catch (e) {
    return { text: errorText(e) };
  }
}

const splitId = (id: string) => {
  const i = id.indexOf("/");
  return { namespace: id.slice(0, i), name: id.slice(i + 1) };
};

/** A CronJob's spec in brief: each field but the Job template, as stored, cut to a line. */
function specInBrief(spec: Record<string, unknown> | undefined): Detail["spec"] {
  return Object.entries(spec ?? {})
    .filter(([k]) => k !== "jobTemplate")
    .map(([field, v]) => {
      const value = typeof v === "string" ? v : JSON.stringify(v);
      return { field, value: value.length > 200 ? `${value.slice(0, 200)}…` : value };
    });
}

export async function dashboard(ctx: Context, args: Args): Promise<Output> {
  const source = new FleetSource({
    client: ctx.client,
    namespace: args.allNamespaces ? undefined : ctx.namespace,
    now: ctx.now,
    ...(args.operatorNamespace ? { operatorNamespace: args.operatorNamespace } : {}),
  });
  // The first screen is read (and the CronJobs found readable) before the URL is printed; the rest is listed while
  // the page loads (source.ts begin()).
  const [assets] = await Promise.all([pageAssets(), source.begin()]);
  const inNamespace = (namespace: string): Context => ({ ...ctx, namespace });

  const detail = async (id: string, slot: string | undefined): Promise<Detail> => {
    const { namespace, name } = splitId(id);
    await source.whenReady();
    // One read of the CronJob (its Jobs, Pods, Events, calendars, the operator) answers all three sections.
    let f: Awaited<ReturnType<typeof readOne>>;
    try {
      f = await readOne(inNamespace(namespace), name, { operatorNamespace: args.operatorNamespace });
    } catch (e) {
      const failed = { text: errorText(e) };
      return { id, ...(slot ? { slot } : {}), why: failed, history: failed, next: failed, spec: [] };
    }
    const one = { cronJob: f.cronJob, namespace, calendars: f.calendars, now: f.now };
    const w = printed(() => whyAnswer(f, slotOf(slot, f.cronJob)));
    const h = printed(() => historyAnswer({ ...one, jobs: f.jobs }));
    const n = printed(() => nextAnswer({ ...one, jobs: f.jobs }));
    const d = w.json as { status?: string; cause?: string } | undefined;
    return {
      id,
      ...(slot ? { slot } : {}),
      why: { text: w.text, ...(d?.status ? { status: d.status } : {}), ...(d?.cause ? { cause: d.cause } : {}) },
      history: { text: h.text },
      next: { text: n.text },
      spec: specInBrief(source.cronJob(id)?.spec as Record<string, unknown> | undefined),
    };
  };

  const action = async (a: Action, id: string): Promise<ActionResult> => {
    const { namespace, name } = splitId(id);
    const c = inNamespace(namespace);
    try {
      // The page does not wait for the Job: the watch shows it.
      if (a === "run") {
        const r = await requestRun(c, name);
        return { ok: true, text: r.text + r.notes.map((x) => `${x}\n`).join("") };
      }
      const out = await setSuspend(c, { name }, a === "suspend");
      return { ok: true, text: out.text + (out.notes ?? []).map((x) => `${x}\n`).join("") };
    } catch (e) {
      return { ok: false, text: errorText(e) };
    }
  };

  let token = "";
  const handlers: Handlers = {
    page: () => ({ html: pageHTML(token), ...assets }),
    fleet: (whole) => source.fleet(!args.readOnly, whole),
    marks: (ids, from, to) => source.marks(ids, from, to),
    detail,
    ...(args.readOnly ? {} : { action }),
    subscribe: (fn) => source.subscribe(fn),
  };
  const server = await serve({ port: args.port, handlers });
  token = server.token;
  const where = args.allNamespaces ? "every namespace" : `namespace ${ctx.namespace}`;
  (ctx.stdout ?? ctx.progress ?? (() => undefined))(
    `Serving the dashboard of ${where} at ${server.url}\n(loopback only; the token is your key: do not share the URL. Ctrl-C stops it.)`,
  );
  for (const u of source.unreadable) ctx.progress?.(`could not read: ${u}`);
  if (args.open) openBrowser(server.url, ctx.progress);
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
  });
  await server.close();
  await source.stop();
  return { text: "", json: {} };
}

/** Opens the URL in the user's browser (--open), as `xdg-open` (Linux) or `open` (macOS) does. */
function openBrowser(url: string, progress: ((s: string) => void) | undefined): void {
  const opener = process.platform === "darwin" ? "open" : process.platform === "win32" ? "explorer" : "xdg-open";
  try {
    const child = spawn(opener, [url], { detached: true, stdio: "ignore" });
    child.on("error", (e) => progress?.(`--open: ${opener} failed (${e.message}): open the URL yourself`));
    child.unref();
  } catch (e) {
    progress?.(`--open: ${opener} failed (${(e as Error).message}): open the URL yourself`);
  }
}
