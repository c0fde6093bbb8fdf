// The reconciler's behaviour tables (test/integration/cronjob/*-cases.ts) against the in-memory FakeClient:
// the same cases the integration suite runs against envtest, in a fraction of the time.
import { fakeDriver } from "../integration/cronjob/harness.ts";
import { reconcilerCases } from "../integration/cronjob/reconciler-cases.ts";
import { reconcilerEdgeCases } from "../integration/cronjob/reconciler-edges-cases.ts";
import { policyCases } from "../integration/cronjob/policy-cases.ts";
import { runNowCases } from "../integration/cronjob/run-now-cases.ts";
import { recordCases } from "../integration/cronjob/record-cases.ts";
import { statusDelayCases } from "../integration/cronjob/status-delay-cases.ts";
import { fleetCases } from "../integration/cronjob/fleet-cases.ts";
import { triggerCases } from "../integration/cronjob/trigger-cases.ts";
import { limitsCases } from "../integration/cronjob/limits-cases.ts";

reconcilerCases(fakeDriver());
reconcilerEdgeCases(fakeDriver());
runNowCases(fakeDriver());
policyCases(fakeDriver());
// The record's exact entries order what a pass created against what it decided: Jobs stamped by the fake clock.
recordCases(fakeDriver({ clockStamps: true }));
// --status-write-delay's rows: a new run's status write waits for its end.
statusDelayCases(fakeDriver({ clockStamps: true }));
// Issue 45's fleet rules: concurrency groups, the start limit, queued Jobs.
fleetCases(fakeDriver({ clockStamps: true }));
triggerCases(fakeDriver({ clockStamps: true }));
limitsCases(fakeDriver({ clockStamps: true }));
