// Runs the webhook server under the manager: started at once (not leader-gated: every replica must
// answer the apiserver), closed on shutdown.
import type { Logger } from "../log.ts";
import type { Runnable } from "../manager.ts";
import type { Checker } from "../probes.ts";
import { startWebhookServer, type WebhookServer, type WebhookServerOptions } from "./server.ts";

export function webhookRunnable(
  opts: WebhookServerOptions & { logger?: Logger },
): Runnable & { checker: Checker; server(): WebhookServer | undefined } {
  let server: WebhookServer | undefined;
  return {
    name: "webhook-server",
    needLeaderElection: false,
    async start(signal: AbortSignal) {
      server = await startWebhookServer(opts);
      opts.logger?.info("Serving webhook server", { url: server.url });
      await new Promise<void>((resolve) =>
        signal.aborted ? resolve() : signal.addEventListener("abort", () => resolve(), { once: true }),
      );
      await server.close();
    },
    checker: async () => {
      if (!server) throw new Error("webhook server not started");
      await server.checker()();
    },
    server: () => server,
  };
}
