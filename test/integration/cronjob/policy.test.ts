// The missed-run policies and stop-after-failures table (policy-cases.ts) against a real apiserver; the unit
// suite runs the same table against the in-memory fake (test/unit/cronjob-reconciler-table.test.ts).
import { apiserverDriver } from "./harness.ts";
import { policyCases } from "./policy-cases.ts";

policyCases(apiserverDriver());
