// The plugin's entry point: the launcher (kubectl-cron) runs this file, and the prebuilt bundle starts here too
// (hack/build-plugin.ts). `--help`, a usage error and `__complete` answer from model/args.ts and commands/completion.ts alone;
// every other command imports main.ts, and with it the client, zod, yaml and the API types. Each import() is a
// split point: the bundle loads that code only when a command needs it.
import { parseCommandLine, UsageError, USAGE } from "./model/args.ts";

interface IO {
  stdout: (s: string) => void;
  stderr: (s: string) => void;
  env: NodeJS.ProcessEnv;
}

/** What main() answers for the same words (exit codes: main.ts's EXIT), without loading it where it can. */
export async function run(argv: readonly string[], io: IO): Promise<number> {
  if (argv[0] === "__complete") return (await import("./commands/completecommand.ts")).completion(argv.slice(1), io);
  try {
    if (parseCommandLine(argv) === "help") {
      io.stdout(USAGE);
      return 0;
    }
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    io.stderr(`error: ${e.message}\nRun 'kubectl cron --help' for usage.\n`);
    return 2;
  }
  const { main } = await import("./main.ts");
  return main(argv, io);
}

/** Runs the command line of this process and exits with its code. */
export async function start(): Promise<never> {
  const code = await run(process.argv.slice(2), {
    stdout: (s) => process.stdout.write(s),
    stderr: (s) => process.stderr.write(s),
    env: process.env,
  });
  // The client's keep-alive sockets would hold the process open; exit once the output is flushed.
  await new Promise<void>((r) => process.stdout.write("", () => r()));
  process.exit(code);
}

if (import.meta.main) await start();
