// One leader death that several disruptive suites share (run.ts runs the suites of one disruption together): the
// concurrency group's story (fleets.test.ts) and the retries' (fleets2.test.ts) each need the leader SIGKILLed at
// a point of their own story; a kill each, one after the other, cost the run a second leader death's minutes. Here
// the first suite to ask fixes the plan (the first counted minute, and when the kill comes), each suite sets its
// story's times from it, and the one kill is awaited by all: what each proves across the leader's death is
// unchanged, and the node is disturbed once.
import assert from "node:assert/strict";
import { eventually } from "../eventually.ts";
import { containerID, sleep } from "./cluster-tools.ts";
import type { Suite } from "./suite.ts";

const MINUTE = 60_000;
/** Room before the first counted minute for every suite to make its objects (a few admissions each). */
const LEAD_MS = 20_000;
/**
 * The kill comes this long after the first counted minute: 5 s before its third minute's slot. The group's second
 * member's Job runs then (each runs 70 s, one at a time), so the successor gives the third its turn; the retried
 * slot (first + 1 minute) has failed once and its first attempt too, so the successor makes the second attempt.
 */
export const KILL_AFTER_MS = 2 * MINUTE - 5_000;

/** The leader's death as it happened: when, and who held the Lease. */
export interface Kill {
  at: number;
  holder: string;
}

/** The shared plan: the first counted minute, when the leader dies, and the kill itself. */
export interface LeaderDeath {
  /** The first whole minute the suites count from; every suite's objects exist before it. */
  first: number;
  /** When the kill is made (it waits for both replicas Ready and a live leader first). */
  killAt: number;
  /** The kill, once made. */
  kill: Promise<Kill>;
}

let planned: LeaderDeath | undefined;

/** Both replicas Ready and one of them leading: what the kill starts from, and what a suite leaves. */
export async function settled(suite: Suite): Promise<void> {
  await suite.readyManagerPods(2, 180_000, suite.pollMs);
  await suite.liveLeaderPod(90_000, suite.pollMs);
}

/** The leader's container SIGKILLed on the node (its Lease is not released): it restarts as a standby. */
async function killLeader(suite: Suite): Promise<Kill> {
  const { pod, holder } = await suite.leaderPod();
  const id = containerID(pod);
  const r = await suite.cluster.ctr(["tasks", "kill", "--signal", "SIGKILL", id]);
  assert.equal(r.code, 0, `ctr tasks kill: ${r.stderr}`);
  return { at: Date.now(), holder };
}

/**
 * The leader death of this run: planned by the first suite that asks (after it found the operator settled), joined
 * by the others. A suite asks once its story can start within LEAD_MS.
 */
export function leaderDeath(suite: Suite): LeaderDeath {
  if (planned) return planned;
  const first = Math.ceil((Date.now() + LEAD_MS) / MINUTE) * MINUTE;
  const killAt = first + KILL_AFTER_MS;
  const kill = (async () => {
    await sleep(Math.max(0, killAt - Date.now()));
    await settled(suite);
    return killLeader(suite);
  })();
  // Awaited by every suite that joined; one that failed before awaiting it must not leave it unhandled.
  kill.catch(() => {});
  planned = { first, killAt, kill };
  return planned;
}

/** The Lease's next holder after the kill: the successor every story's later runs are made by. */
export function successorOf(suite: Suite, kill: Kill): Promise<string> {
  return eventually(
    "another holder of the Lease after the leader's death",
    async () => {
      const h = await suite.leaseHolder();
      return h && h !== kill.holder ? h : undefined;
    },
    90_000,
    undefined,
    suite.pollMs,
  );
}
