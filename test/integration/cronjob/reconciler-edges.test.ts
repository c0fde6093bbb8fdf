// The reconciler's edge cases (reconciler-edges-cases.ts) against a real apiserver; the unit suite runs the
// same table against the in-memory fake (test/unit/cronjob-reconciler-table.test.ts).
import { apiserverDriver } from "./harness.ts";
import { reconcilerEdgeCases } from "./reconciler-edges-cases.ts";

reconcilerEdgeCases(apiserverDriver());
