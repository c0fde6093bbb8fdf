// The manager entrypoint (kubebuilder's cmd/main.go): parse flags, build the manager, register the
// CronJob controller (and webhooks), run until SIGTERM/SIGINT.
import { exitProcess } from "../runtime/exit.ts";
import { parseFlags, usage, UsageError } from "./flags.ts";

let flags;
try {
  flags = parseFlags(process.argv.slice(2));
} catch (err) {
  if (!(err instanceof UsageError)) throw err;
  process.stderr.write(`${err.message}\nRun with --help for the list of flags.\n`);
  process.exit(2);
}
if (flags.help) {
  process.stdout.write(usage());
  process.exit(0);
}

// Loaded after flag parsing so --help and usage errors answer instantly.
const { run } = await import("./run.ts");
const code = await run(flags);
// Exit at once: after a lost lease, a reconcile that ignored its abort signal must not go on writing
// while a successor leads (controller-runtime's main exits the same way). Never by deadlock: runtime/exit.ts.
exitProcess(code);
