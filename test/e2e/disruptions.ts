// The names of disruptions several suites share (run.ts runs a disruption's suites together, then the next one).

/**
 * The leader SIGKILLed once (leader-death.ts), with HA's other disruptions around it (the standby's death before, a
 * rollout after): under continuous applies, under a concurrency group's story, between a slot's retries, and in a
 * backfill.
 */
export const LEADER_KILLED =
  "the leader SIGKILLed under continuous applies, a concurrency group, retries and a backfill; the standby before, a rollout after";
