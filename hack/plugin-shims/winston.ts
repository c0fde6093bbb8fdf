// winston as the built plugin has it (hack/build-plugin.ts): runtime/log.ts builds its formats with winston at
// load, but `kubectl cron` never creates a logger (its words go to stdout and stderr directly), and loading winston
// (logform, readable-stream, async, colors) cost the plugin ~7 MB of RSS and ~40 ms at every start
// (bench/results/2026-11-28-issue72.analysis.md). Creating a logger here fails loudly rather than write nothing.
type Transform = (info: Record<PropertyKey, unknown>) => unknown;

function format(transform: Transform): () => { transform: Transform } {
  return () => ({ transform });
}

function createLogger(): never {
  throw new Error("the built kubectl plugin has no winston: runtime/log.ts createLogger is the operator's");
}

class Stream {
  constructor() {
    createLogger();
  }
}

export default { format, createLogger, transports: { Stream } };
