// The reconciler's behaviour table (status-delay-cases.ts) against a real apiserver; the unit suite runs the
// same table against the in-memory fake (test/unit/cronjob-reconciler-table.test.ts).
import { apiserverDriver } from "./harness.ts";
import { statusDelayCases } from "./status-delay-cases.ts";

statusDelayCases(apiserverDriver());
