// Node 24's exit can deadlock: it joins the V8 platform's worker threads while a concurrent Maglev or Sparkplug
// compile job on one of them waits for a garbage collection only the main thread could run (nodejs/node#54918,
// #64274). The process keeps both compilers while it works (their code is what it runs on), and turns them off the
// moment it begins to stop: no background compile job of theirs is posted after that, and those in flight end
// (milliseconds) during the shutdown that follows, before the exit joins the workers. A process that exits at once
// (a lost lease) turns them off just before; its window is the few milliseconds of a job already running.
import { setFlagsFromString } from "node:v8";

let quiet = false;

/** Stop posting background Maglev and Sparkplug compile jobs (idempotent): the first step of every stop. */
export function quiesceBackgroundCompilers(): void {
  if (quiet) return;
  quiet = true;
  setFlagsFromString("--no-maglev");
  setFlagsFromString("--no-concurrent-sparkplug");
}

/** process.exit, with the background compilers quiesced first. */
export function exitProcess(code: number): never {
  quiesceBackgroundCompilers();
  process.exit(code);
}
