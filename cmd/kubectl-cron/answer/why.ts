// `kubectl cron why`: for one slot of a CronJob (default: the latest that should have run), a one-line verdict,
// the evidence it rests on, and what to do; then the next slot and whatever else needs attention. A pure function of
// the live state read/whyfacts.ts read (WhyFacts): the record the operator keeps (status.recentRuns) answers for slots
// whose Events are long gone, the Jobs and Pods for what ran, the Lease and the operator's Pods for the operator
// itself. Every verdict names a row of causes.ts, and its fix is that row's. The diagnosis is split by decision under
// why/: diagnose.ts picks the slot and the module that decides (slot.ts, ran.ts, record.ts and one module per
// decision of the record, undecided.ts), operator.ts and risks.ts what needs attention besides, text.ts prints.
export { diagnose } from "./why/diagnose.ts";
export { Fleet } from "./why/fleet.ts";
export { parseSlot, zoneOf } from "./why/slot.ts";
export { allHealthyText, whyText } from "./why/text.ts";
export type { Diagnosis } from "./why/verdict.ts";
