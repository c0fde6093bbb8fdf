// Retries and exclusion calendars (trigger-cases.ts) against a real apiserver; the unit suite runs the same table
// against the in-memory fake (test/unit/cronjob-reconciler-table.test.ts).
import { apiserverDriver } from "./harness.ts";
import { limitsCases } from "./limits-cases.ts";
import { triggerCases } from "./trigger-cases.ts";

triggerCases(apiserverDriver());
limitsCases(apiserverDriver());
