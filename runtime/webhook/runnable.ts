// Runs the webhook server under the manager: started at once (not leader-gated: every replica must
// answer the apiserver), closed on shutdown.
import type { Logger } from "../log.ts";
import type { Runnable } from "../manager.ts";
import type { Checker } from "../probes.ts";
import { startWebhookServer, type WebhookServer, type WebhookServerOptions } from "./server.ts";

interface WebhookRunnableOptions extends WebhookServerOptions {
  logger?: Logger;
  /**
   * Resolves once the certificate files exist (e.g. CertProvisioner.waitReady): the server starts only
   * then, and its readiness check fails until it has. Without it the files must exist at start.
   */
  certificateReady?: (signal: AbortSignal) => Promise<unknown>;
}

export function webhookRunnable(
  opts: WebhookRunnableOptions,
): Runnable & { checker: Checker; server(): WebhookServer | undefined } {
  let server: WebhookServer | undefined;
  let waiting = false;
  return {
    name: "webhook-server",
    needLeaderElection: false,
    async start(signal: AbortSignal) {
      if (opts.certificateReady) {
        waiting = true;
        try {
          await opts.certificateReady(signal);
        } finally {
          waiting = false;
        }
        if (signal.aborted) return;
      }
      server = await startWebhookServer(opts);
      opts.logger?.info("Serving webhook server", { url: server.url });
      await new Promise<void>((resolve) =>
        signal.aborted ? resolve() : signal.addEventListener("abort", () => resolve(), { once: true }),
      );
      await server.close();
    },
    checker: async () => {
      if (!server) {
        throw new Error(
          waiting ? "webhook server not started: waiting for its serving certificate" : "webhook server not started",
        );
      }
      await server.checker()();
    },
    server: () => server,
  };
}
