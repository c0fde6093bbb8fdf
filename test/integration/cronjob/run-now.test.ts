// Run now, lastFailedTime and H schedules (run-now-cases.ts) against a real apiserver; the unit suite runs
// the same table against the in-memory fake (test/unit/cronjob-reconciler-table.test.ts).
import { apiserverDriver } from "./harness.ts";
import { runNowCases } from "./run-now-cases.ts";

runNowCases(apiserverDriver());
