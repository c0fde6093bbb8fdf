// The small Job spec the benchmark runs and hack/footprint.ts's `--template small` measures: one shared
// definition, so the two measure the same workload without importing each other.

/** One small container that prints and exits. */
export function smallJobSpec(): Record<string, unknown> {
  return {
    backoffLimit: 0,
    template: {
      metadata: { labels: { app: "bench" } },
      spec: {
        restartPolicy: "Never",
        containers: [{ name: "main", image: "busybox:1.36", command: ["sh", "-c", "echo hello"] }],
      },
    },
  };
}
