// The fleet table (fleet-cases.ts: concurrency groups, the start limit) against a real apiserver; the unit suite
// runs the same table against the in-memory fake (test/unit/cronjob-reconciler-table.test.ts).
import { apiserverDriver } from "./harness.ts";
import { fleetCases } from "./fleet-cases.ts";

fleetCases(apiserverDriver());
