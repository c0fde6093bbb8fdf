// What `kubectl cron dashboard` sends its page, and what the page draws: plain types, and the page's words. The server
// (cmd/kubectl-cron/dashboard/) builds them from the plugin's readers; the page (dashboard/web/) only draws them.
// Times are RFC 3339 strings in UTC. A CronJob is named by its id, "namespace/name"; a group by "namespace/name".
// Its one import is the record's words (api/v1/reasons.ts: data, no imports of its own, bundled into the page): a
// decision a mark stands for is described as the API reference and `why` describe it.
import { RECORD_DECISIONS } from "../../../api/v1/reasons.ts";

/**
 * What a mark on a CronJob's row stands for. Runs (a Job): succeeded, failed, running. Decisions of the record
 * (status.recentRuns) that started no Job: held, missed, skipped, excluded, refused, stopped, superseded. To come:
 * slot (a slot of its schedules), slot-excluded (one an exclusion window holds), pending (a run due later, of any
 * trigger's row: a retry's attempt, at its start),
 * slots (many slots too close to draw one by one: `count` of them from `at` to `end`).
 */
export type MarkKind =
  | "succeeded"
  | "failed"
  | "running"
  | "held"
  | "missed"
  | "skipped"
  | "excluded"
  | "refused"
  | "stopped"
  | "superseded"
  | "slot"
  | "slot-excluded"
  | "pending"
  | "slots";

export interface Mark {
  kind: MarkKind;
  /** Where it starts on the axis: a run's start, a decision's slot (or when it was decided), a slot's time. */
  at: string;
  /** A run's end (absent while it runs: it reaches now); a held run's start; the last of `slots`. */
  end?: string;
  /** The slot to ask `why` about (absent for a run-now request). */
  slot?: string;
  /** The Job, for a run. */
  job?: string;
  /** Its trigger's word (api/v1/triggers.ts): scheduled, manual, backfill, retry. */
  trigger?: string;
  /** One line for a tooltip: the record's reason, the Job's result, the window that holds a slot. */
  title: string;
  /** slots: how many. */
  count?: number;
}

/** An exclusion window over the axis: shaded. */
export interface Shade {
  from: string;
  to: string;
  /** The calendar's name, or "spec.exclusions" for the CronJob's own windows. */
  by: string;
  window: string;
}

/** What `why -A` says of a CronJob that needs attention: its cause (causes.ts) and its words. */
export interface Attention {
  cause: string;
  text: string;
  /** Its cause is that the CronJob is suspended: what the row's own suspended badge says (the page says it once). */
  suspended?: true;
}

/** A CronJob in the fleet's index: enough to list, filter and sort it, without its marks. */
export interface Row {
  id: string;
  namespace: string;
  name: string;
  /** spec.concurrencyGroup. */
  group?: string;
  suspended: boolean;
  /** Its schedules as written, joined by "; ", with the zone when not UTC. */
  schedule: string;
  /** The newest run's result, from its Jobs: Complete, Failed, Running; absent: none kept. */
  last?: "Complete" | "Failed" | "Running";
  /**
   * What shapes its schedule, in `next`'s words: the window its slots lie in (spec.startTime, spec.endTime), its
   * scheduling ended (spec.maxRuns made, spec.endTime passed), the upstreams it runs after (spec.after).
   */
  shaping?: RowShaping;
  /** null: healthy as `why -A` read it; absent: not read yet. */
  attention?: Attention | null;
}

/** What shapes a CronJob's schedule (Row.shaping), each in words; the page marks each with a badge (SHAPING_BADGES). */
export interface RowShaping {
  window?: string;
  ended?: string;
  after?: string[];
}

/** The badge each part of Row.shaping is marked with on the row (its words are the badge's title). */
export const SHAPING_BADGES: Readonly<Record<keyof RowShaping, string>> = {
  window: "window",
  ended: "ended",
  after: "after",
};

/** A CronJob's marks over a window, and the windows that exclude its slots. */
export interface RowMarks {
  id: string;
  marks: Mark[];
  shades: Shade[];
}

/** A concurrency group as a lane: its limit, the places its runs used over time, the runs that waited. */
export interface GroupLane {
  id: string;
  namespace: string;
  name: string;
  /** absent: no limit read (the group is missing or cannot be read). */
  limit?: number;
  exists: boolean;
  /** A step line: from `at` on, `used` places are used (runs of its members whose Jobs run). */
  usage: { at: string; used: number }[];
  /** Runs that waited for a place: from the slot to when they started (absent: still waiting). */
  waits: { cronJob: string; from: string; to?: string; job?: string }[];
}

export interface Fleet {
  now: string;
  /** What the page shows: one namespace, or all (-A). */
  scope: { namespace?: string; allNamespaces: boolean };
  rows: Row[];
  groups: GroupLane[];
  /** Problems many CronJobs share (the operator's, a group's, a calendar's), as `why -A` says them. */
  shared: Attention[];
  /** What the user may not read: "list jobs in namespace x: forbidden", as `why` says "could not read". */
  unreadable: string[];
  /** Whether the page offers run now, suspend and resume (false with --read-only). */
  actions: boolean;
  /** When `why -A` last read the fleet (absent: not yet). */
  verdictsAt?: string;
  /** The first screen only, sent while the rest is read: the page asks again with `whole=1`, which waits for it. */
  partial?: true;
}

/** One CronJob, as `why`, `history` and `next` print it (their text, word for word), and its spec in brief. */
export interface Detail {
  id: string;
  /** The slot asked about (absent: the newest). */
  slot?: string;
  why: { text: string; status?: string; cause?: string };
  history: { text: string };
  next: { text: string };
  spec: { field: string; value: string }[];
}

/** An action the page may ask for, with the user's own rights (the plugin's commands, through the same code). */
export type Action = "run" | "suspend" | "resume";

export interface ActionResult {
  ok: boolean;
  /** What the command printed, or its error. */
  text: string;
}

/**
 * What the server pushes on /api/events (server-sent events, one JSON object per `data:` line).
 * changed: CronJobs or groups whose rows or marks changed (the page asks again for those it shows);
 * verdicts: `why -A` read the fleet again; unreadable: what cannot be read now (Fleet's), e.g. `why -A` failed.
 */
export type Push =
  | {
      type: "changed";
      now: string;
      rows: Row[];
      removed: string[];
      /** Every lane of the namespaces `laneNamespaces`: those namespaces' lanes are these (none: none left). */
      groups: GroupLane[];
      laneNamespaces: string[];
    }
  | { type: "verdicts"; at: string; attention: Record<string, Attention | null>; shared: Attention[] }
  | { type: "unreadable"; unreadable: string[] };

/**
 * The server's paths. Every request carries the token the command printed, as `?token=`; the page reads it from
 * its own URL. GET / is the page (it loads /app.js and /app.css). GET /api/fleet: a Fleet. GET /api/marks with
 * from, to (RFC 3339) and ids (comma-separated CronJob ids, at most MAX_MARK_IDS): RowMarks[]. GET /api/detail with
 * id and, optionally, slot: a Detail. GET /api/events: Push as server-sent events. POST /api/action with a JSON
 * body { action, id } (Content-Type application/json, from the page's own Origin): an ActionResult.
 */
export const PATHS = {
  page: "/",
  script: "/app.js",
  style: "/app.css",
  fleet: "/api/fleet",
  marks: "/api/marks",
  detail: "/api/detail",
  events: "/api/events",
  action: "/api/action",
} as const;

/** The most CronJobs one /api/marks request asks for: the page asks for the rows it shows. */
export const MAX_MARK_IDS = 200;

/** `n` things, in the singular for one. */
const counted = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** What a shaded stretch of a row is called on the page (the legend). */
export const SHADE_WORDS = {
  label: "exclusion window",
  meaning: "a window of spec.exclusions or a calendar that holds slots",
} as const;

/** What each mark is called on the page (the legend, and the first words of its tooltip): the page's one table. */
export const MARK_WORDS: Readonly<Record<MarkKind, { label: string; meaning: string }>> = {
  succeeded: { label: "succeeded", meaning: "a run whose Job completed" },
  failed: { label: "failed", meaning: "a run whose Job failed" },
  running: { label: "running", meaning: "a run whose Job has not finished" },
  held: { label: "held", meaning: "not started (yet): the record's reason says what held it" },
  missed: { label: "missed", meaning: RECORD_DECISIONS.Missed.description },
  skipped: { label: "skipped", meaning: RECORD_DECISIONS.Skipped.description },
  excluded: { label: "excluded", meaning: "not run: an exclusion window held the slot" },
  refused: { label: "refused", meaning: "the API server refused to create its Job" },
  stopped: { label: "stopped", meaning: RECORD_DECISIONS.Stopped.description },
  superseded: { label: "superseded", meaning: "a retry not run: a newer slot's run started first" },
  slot: { label: "next slot", meaning: "a slot of its schedules to come" },
  "slot-excluded": { label: "excluded slot", meaning: "a slot to come that an exclusion window holds" },
  pending: { label: "run due", meaning: "a run due later: a retry of a failed run, at its start" },
  slots: { label: "many slots", meaning: "slots too close together to draw one by one" },
};

/** Every other word the page says (its heading, filters, buttons, panel, lanes and errors): the page's one table. */
export const PAGE_WORDS = {
  heading: "CronJobs",
  loading: "loading…",
  scope: (namespace: string | undefined) => (namespace === undefined ? "all namespaces" : `namespace ${namespace}`),
  live: { connecting: "connecting", live: "live", reconnecting: "reconnecting" },
  liveTitle: { connecting: "connecting", live: "receiving updates", reconnecting: "connection lost: reconnecting" },
  namespace: "namespace",
  group: "group",
  name: "name",
  allNamespaces: "all",
  anyGroup: "any",
  needsAttention: (n: number) => `needs attention (${n})`,
  nameFilter: "filter by name",
  count: (shown: number, all: number) => `${shown} of ${all}`,
  earlier: "◀ earlier",
  earlierTitle: "earlier by half the window",
  now: "now",
  later: "later ▶",
  laterTitle: "later by half the window",
  notRead: "not read yet",
  suspended: "suspended",
  last: (result: string) => `last: ${result}`,
  noMatch: "No CronJob matches the filters.",
  none: "No CronJobs.",
  lane: (name: string, exists: boolean, limit: number | undefined) =>
    `group ${name} (${exists ? (limit !== undefined ? `limit ${limit}` : "no limit read") : "missing"})`,
  limit: (limit: number) => `limit ${limit}`,
  placesUsed: "places used",
  /** A band's count (none: the legend's sample). */
  slots: (count: number | undefined) => (count === undefined ? "many slots" : counted(count, "slot")),
  run: (job: string, trigger: string, slot: string | undefined) =>
    `Job ${job} (${trigger}${slot ? `, slot ${slot}` : ""})`,
  /** A run due later: its trigger's word, which run it is (its row's words) and its slot. */
  pending: (word: string, what: string | undefined, slot: string, after: string | undefined) =>
    `${word}: ${what ? `${what} of ` : ""}slot ${slot}${after ? ` after Job ${after}` : ""}`,
  /** A suspended CronJob's slot (`count` 1), or band of slots, said with what it is. */
  wouldRun: (what: string, count = 1) => `${what} (suspended: ${count === 1 ? "it" : "they"} would run then)`,
  waited: (cronJob: string, from: string, to: string | undefined, job: string | undefined) =>
    `${cronJob} waited from ${from}${to ? ` to ${to}` : ", still waiting"}${job ? ` (job ${job})` : ""}`,
  slot: (local: string, utc: string) => `slot ${local} (${utc})`,
  sections: { why: "why", history: "history", next: "next", spec: "spec" },
  close: "close",
  loadingDetail: "Loading…",
  actions: { run: "Run now", suspend: "Suspend", resume: "Resume" },
  confirm: {
    run: (id: string) => `Run cronjob ${id} now?`,
    suspend: (id: string) => `Suspend cronjob ${id}?`,
    resume: (id: string) => `Resume cronjob ${id}?`,
  },
  couldNotRead: "could not read: ",
  couldNotLoad: (what: "the fleet" | "marks" | "the CronJob", why: string) => `could not load ${what}: ${why}`,
} as const;
