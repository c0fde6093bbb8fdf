// The entry point of the prebuilt plugin (hack/build-plugin.ts): runs cmd/kubectl-cron/cli.ts's command line.
// `import.meta.main` is false throughout the bundle, so the entry blocks of cli.ts and main.ts stay inert.
// Turned on before the first import(), Node's compile cache serves the chunks of the split bundle (bin/plugin/)
// from its cache after the first run; a single executable has a code cache of its own.
import * as nodeModule from "node:module";
import { isSea } from "node:sea";

if (!isSea()) nodeModule.enableCompileCache?.();
void (async () => {
  const { start } = await import("../cmd/kubectl-cron/cli.ts");
  await start();
})();
