// What every command of the plugin is given (the client, the namespace, the clock) and gives back to print: in the
// model, below every room that takes it (the reads and writes take the client, the answers give an Output), so none
// of them imports a command for it.
import type { Client } from "../../../runtime/client.ts";

export interface Output {
  text: string;
  json: unknown;
  /** Said on stderr (progress and hints), also with -o json. */
  notes?: string[];
}

export interface Context {
  client: Client;
  namespace: string;
  now: () => Date;
  sleep: (ms: number) => Promise<void>;
  /** Progress said at once on stderr (a long wait). */
  progress?: (s: string) => void;
  /** A line said at once on stdout (the dashboard's URL, before it serves). */
  stdout?: (s: string) => void;
}
