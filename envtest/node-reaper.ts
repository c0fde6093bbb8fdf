// The local node's reaper: one small process per running node cluster, started by NodeCluster.start()
// under `flock <node-host>/lock`, so one node runs on a machine at a time. It
//   1. cleans up after a previous cluster that died without stopping (its record is still in state.json),
//   2. records the machine's state for the new cluster (node-host.ts) and prints "ready",
//   3. watches the owning process: if it dies without NodeCluster.stop() (SIGKILL, a crash), it kills the
//      cluster's processes and restores the machine; if stop() ran, the record is gone and it just exits.
// Its lock is released when it exits. `clean` mode does step 1 only (cleanupStaleNodeCluster()).
//
//   flock -w SECONDS LOCK node node-reaper.ts watch '{"dir":…,"wipe":[…],"removeDir":…,"owner":{…}}'
//   flock -n LOCK node node-reaper.ts clean
import {
  cleanupHost,
  type HostRecord,
  preflight,
  processAlive,
  readHostRecord,
  removeHostRecord,
  sleepSync,
  snapshotHost,
  writeHostRecord,
} from "./node-host.ts";

const [mode = "", arg = "{}"] = process.argv.slice(2);
const log = (msg: string) => process.stderr.write(`${new Date().toISOString()} node-reaper[${process.pid}]: ${msg}\n`);
// stdout is a pipe to the starting process, which stops reading after the first line.
const reply = (msg: string) => process.stdout.write(`${msg}\n`);

// The reaper outlives terminals and runners: only SIGKILL ends it early (and then the next start cleans).
for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.on(sig, () => log(`ignoring ${sig}`));

function cleanStale(waitForOwner: boolean): { cleaned: boolean; busy?: boolean; problems: string[] } {
  const rec = readHostRecord();
  if (!rec) return { cleaned: false, problems: [] };
  if (processAlive(rec.owner)) {
    if (!waitForOwner) return { cleaned: false, busy: true, problems: [] };
    // Its reaper died, but the cluster's owner still runs: wait for it rather than pull the node from
    // under it.
    log(`waiting for pid ${rec.owner.pid}, which still owns the node cluster in ${rec.dir}`);
    while (processAlive(rec.owner)) sleepSync(1000);
  }
  log(`cleaning up after the node cluster in ${rec.dir} (owner pid ${rec.owner.pid} is gone)`);
  const report = cleanupHost(rec, log);
  if (report.problems.length === 0) removeHostRecord(rec);
  for (const p of report.problems) log(`problem: ${p}`);
  return { cleaned: true, problems: report.problems };
}

if (mode === "clean") {
  // A cluster whose reaper died but whose owner still runs is not stale: reported busy, left alone.
  const r = cleanStale(false);
  reply(JSON.stringify(r));
  process.exit(r.problems.length ? 1 : 0);
} else if (mode === "watch") {
  const req = JSON.parse(arg) as Pick<HostRecord, "dir" | "wipe" | "removeDir" | "owner">;
  const stale = cleanStale(true);
  if (stale.problems.length > 0) {
    reply(
      `error ${JSON.stringify(`leftovers of an earlier node cluster could not be removed: ${stale.problems.join("; ")}`)}`,
    );
    process.exit(1);
  }
  if (!processAlive(req.owner)) process.exit(0);
  const problems = preflight(log);
  if (problems.length > 0) {
    reply(`error ${JSON.stringify(problems.join("; "))}`);
    process.exit(1);
  }
  const rec = snapshotHost(req);
  writeHostRecord(rec);
  log(`watching pid ${rec.owner.pid} (node cluster in ${rec.dir})`);
  reply("ready");
  const timer = setInterval(() => {
    const cur = readHostRecord();
    if (!cur || cur.startedAt !== rec.startedAt || cur.owner.pid !== rec.owner.pid) {
      clearInterval(timer); // stop() restored the machine and removed the record
      return;
    }
    if (processAlive(rec.owner)) return;
    clearInterval(timer);
    log(`owner pid ${rec.owner.pid} exited without stopping the cluster; cleaning up`);
    const report = cleanupHost(rec, log);
    for (const p of report.problems) log(`problem: ${p}`);
    if (report.problems.length === 0) removeHostRecord(rec);
    process.exitCode = report.problems.length ? 1 : 0;
  }, 500);
} else {
  log(`usage: node-reaper.ts watch JSON | clean (got "${mode}")`);
  process.exit(2);
}
