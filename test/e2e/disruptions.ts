// The names of disruptions several suites share (run.ts runs a disruption's suites together, then the next one).

/** The leader SIGKILLed once, under a concurrency group's story and between a slot's retries (leader-death.ts). */
export const LEADER_KILLED = "fleets: the leader SIGKILLed under a concurrency group and between retries";
