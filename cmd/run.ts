// Wiring of the manager process; cmd/main.ts parses flags and calls run().
import { CronJobReconciler } from "../controllers/cronjob_controller.ts";
import { loadKubeConfig } from "../runtime/kubeconfig.ts";
import { createLogger, setDefaultLogger } from "../runtime/log.ts";
import { LeaderElectionLostError, Manager, setupSignalHandler } from "../runtime/manager.ts";
import type { Flags } from "./flags.ts";

export async function run(flags: Flags): Promise<number> {
  const log = createLogger({ level: flags.logLevel, format: flags.logFormat });
  setDefaultLogger(log);
  const setupLog = log.withName("setup");

  let kubeConfig;
  try {
    kubeConfig = loadKubeConfig(flags.kubeconfig || undefined);
  } catch (err) {
    setupLog.error("unable to load the Kubernetes configuration", err);
    return 1;
  }

  const mgr = new Manager({
    kubeConfig,
    logger: log,
    metricsBindAddress: flags.metricsBindAddress,
    healthProbeBindAddress: flags.healthProbeBindAddress,
    leaderElection: flags.leaderElect,
    leaderElectionID: flags.leaderElectionID,
    ...(flags.leaderElectionNamespace ? { leaderElectionNamespace: flags.leaderElectionNamespace } : {}),
    eventSourceComponent: "cronjob-controller",
    userAgent: "cronjob-operator",
  });
  CronJobReconciler.setupWithManager(mgr, { maxConcurrentReconciles: flags.maxConcurrentReconciles });

  setupLog.info("starting manager");
  try {
    await mgr.start(setupSignalHandler());
    return 0;
  } catch (err) {
    setupLog.error(err instanceof LeaderElectionLostError ? "leader election lost" : "problem running manager", err);
    return 1;
  }
}
