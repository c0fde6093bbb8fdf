// A Service's backend on this host, for a control plane without Pods or an endpoints controller: the tests that
// run the webhook server on this host point the webhook Service at it by hand. kube-apiserver routes webhook
// (admission and conversion) calls through the Service's endpoints (--enable-aggregator-routing), and which
// object it reads for them changed: Endpoints through 1.32, EndpointSlices from 1.33 (kubernetes#129837, "Port
// aggregated apiserver discovery to EndpointSlices"). Both are written, so the same test runs on either side.
import { networkInterfaces } from "node:os";
import type { Client } from "../runtime/client.ts";
import { APIError } from "../runtime/errors.ts";
import type { KubeObject, ResourceKind } from "../runtime/kinds.ts";

const ENDPOINTS: ResourceKind = { group: "", version: "v1", kind: "Endpoints", plural: "endpoints", namespaced: true };
/** discovery.k8s.io/v1 from 1.21; v1beta1 (removed in 1.25) before. */
const SLICE_VERSIONS = ["v1", "v1beta1"];
/** The label that ties an EndpointSlice to its Service (discovery.k8s.io/v1 LabelServiceName). */
const SERVICE_NAME_LABEL = "kubernetes.io/service-name";

/** The first IPv4 address of this host that is not loopback: Endpoints and EndpointSlices refuse 127.0.0.0/8. */
export function hostAddress(): string | undefined {
  for (const addrs of Object.values(networkInterfaces())) {
    for (const a of addrs ?? []) if (a.family === "IPv4" && !a.internal) return a.address;
  }
  return undefined;
}

export interface ServiceBackend {
  /** The Service's name and namespace; the Service itself (without a selector) is the caller's. */
  service: string;
  namespace: string;
  ip: string;
  port: number;
  /**
   * The Service ports' names ("" for an unnamed port; default [""]): the endpoints' ports must carry the same.
   * Every name is `port` here (one listener): a Pod declaring those port names.
   */
  portNames?: readonly string[];
}

/** The port names `b`'s Pods declare, as Endpoints and EndpointSlices list them. */
function portsOf(b: ServiceBackend): Array<{ name: string; port: number; protocol: "TCP" }> {
  return (b.portNames ?? [""]).map((name) => ({ name, port: b.port, protocol: "TCP" }));
}

/**
 * Writes the Service's Endpoints and an EndpointSlice, each listing `ip:port` as its one ready address; written
 * again (a rollout: other port names), they are replaced.
 */
export async function createServiceBackend(client: Client, b: ServiceBackend): Promise<void> {
  await upsert(client, ENDPOINTS, {
    apiVersion: "v1",
    kind: "Endpoints",
    metadata: { name: b.service, namespace: b.namespace },
    subsets: [{ addresses: [{ ip: b.ip }], ports: portsOf(b) }],
  } as KubeObject);
  let lastNotFound: unknown;
  for (const version of SLICE_VERSIONS) {
    const kind: ResourceKind = {
      group: "discovery.k8s.io",
      version,
      kind: "EndpointSlice",
      plural: "endpointslices",
      namespaced: true,
    };
    try {
      await upsert(client, kind, {
        apiVersion: `discovery.k8s.io/${version}`,
        kind: "EndpointSlice",
        metadata: { name: b.service, namespace: b.namespace, labels: { [SERVICE_NAME_LABEL]: b.service } },
        addressType: "IPv4",
        endpoints: [{ addresses: [b.ip], conditions: { ready: true } }],
        ports: portsOf(b),
      } as KubeObject);
      return;
    } catch (err) {
      // A version this apiserver does not serve answers 404: try the older one.
      if (!(err instanceof APIError && err.code === 404)) throw err;
      lastNotFound = err;
    }
  }
  throw new Error(`the apiserver serves no EndpointSlice version of ${SLICE_VERSIONS.join(", ")}`, {
    cause: lastNotFound,
  });
}

/** Creates `obj`, or replaces the one of its name (at the resourceVersion read). */
async function upsert(client: Client, kind: ResourceKind, obj: KubeObject): Promise<void> {
  try {
    await client.create(kind, obj);
  } catch (err) {
    if (!(err instanceof APIError && err.code === 409)) throw err;
    const current = await client.get(kind, obj.metadata?.namespace, obj.metadata?.name ?? "");
    await client.update(kind, {
      ...obj,
      metadata: { ...obj.metadata, resourceVersion: current.metadata?.resourceVersion },
    });
  }
}
