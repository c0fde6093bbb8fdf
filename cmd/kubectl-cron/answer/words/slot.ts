// A slot in words with what a verdict must say of it besides (SLOT_WORDS), and what spec.after[].when waits for in
// the words the verdicts say it with (AFTER_WHEN_WORDS).
import type { AfterWhen } from "../../../../api/v1/index.ts";
import type { CauseParams } from "../causes/params.ts";
import type { Slot } from "../causes/say.ts";

/** What spec.after[].when waits for, in the words NO_CAUSE says it with (`upstreamWhen`). */
export const AFTER_WHEN_WORDS: Readonly<Record<AfterWhen, string>> = {
  Succeeded: "a success",
  Failed: "a failure",
  Finished: "any end",
};

/**
 * A slot in words with what the verdict must say of it besides (`when`): a jittered slot's offset; a run after an
 * upstream's run (its "slot" is that run's end), which run it followed.
 */
export const SLOT_WORDS = {
  jittered: (p: Slot & Pick<CauseParams, "offset">) => `${p.when} (jitter offset ${p.offset})`,
  afterRun: (p: Slot & Pick<CauseParams, "upstream" | "upstreamRun" | "upstreamJob">) =>
    `${p.when}, after ${p.upstream}'s ${p.upstreamRun} run (Job ${p.upstreamJob})`,
};
