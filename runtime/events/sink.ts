// Where events are written (client-go's record.EventSink). The recorder depends only on this
// interface, so unit tests inject an in-memory sink and need no server.
import { CoreV1Api, PatchStrategy, setHeaderOptions } from "@kubernetes/client-node";
import type { CoreV1Event, KubeConfig } from "@kubernetes/client-node";
import type { Client } from "../client.ts";
import { APIError } from "../errors.ts";
import { type KubeObject, Kinds } from "../kinds.ts";
import type { EventPatch } from "./correlator.ts";

export interface EventSink {
  /** Create the Event; rejects with an APIError when the server answers an error status. */
  create(event: CoreV1Event): Promise<CoreV1Event>;
  /** Update an existing Event's count, lastTimestamp and message; an APIError 404 when it is gone. */
  patch(event: CoreV1Event, patch: EventPatch): Promise<CoreV1Event>;
}

/** client-node's ApiException (code + body) becomes a typed APIError; anything else is a transport error. */
export function toAPIError(err: unknown): unknown {
  if (err instanceof APIError) return err;
  if (err && typeof err === "object" && "code" in err && typeof err.code === "number" && err.code >= 100) {
    return APIError.fromResponse(err.code, "body" in err ? err.body : undefined);
  }
  return err;
}

// A merge patch rather than client-node's default JSON patch: the fields are plain scalars and a
// merge patch does not need to know whether they are already set.
const mergePatch = setHeaderOptions("Content-Type", PatchStrategy.MergePatch);

export class CoreV1EventSink implements EventSink {
  readonly #api: CoreV1Api;

  constructor(kubeConfig: KubeConfig) {
    this.#api = kubeConfig.makeApiClient(CoreV1Api);
  }

  async create(event: CoreV1Event): Promise<CoreV1Event> {
    try {
      return await this.#api.createNamespacedEvent({ namespace: event.metadata.namespace ?? "default", body: event });
    } catch (err) {
      throw toAPIError(err);
    }
  }

  async patch(event: CoreV1Event, patch: EventPatch): Promise<CoreV1Event> {
    try {
      return await this.#api.patchNamespacedEvent(
        { name: event.metadata.name ?? "", namespace: event.metadata.namespace ?? "default", body: patch },
        mergePatch,
      );
    } catch (err) {
      throw toAPIError(err);
    }
  }
}

/**
 * Writes Events through the runtime's Client: one keep-alive connection pool shared with the
 * controllers (client-node opens a new TLS connection per call, which dominated CPU under load).
 */
export class ClientEventSink implements EventSink {
  readonly #client: Client;

  constructor(client: Client) {
    this.#client = client;
  }

  async create(event: CoreV1Event): Promise<CoreV1Event> {
    return withDates(await this.#client.create(Kinds.Event, event as unknown as KubeObject));
  }

  async patch(event: CoreV1Event, patch: EventPatch): Promise<CoreV1Event> {
    return withDates(
      await this.#client.patch(
        Kinds.Event,
        event.metadata.namespace ?? "default",
        event.metadata.name ?? "",
        patch,
        "merge",
      ),
    );
  }
}

/** Wire JSON carries timestamps as strings; the correlator keeps client-node's Date-typed shape. */
function withDates(o: KubeObject): CoreV1Event {
  const e = o as unknown as CoreV1Event & { firstTimestamp?: unknown; lastTimestamp?: unknown };
  if (typeof e.firstTimestamp === "string") e.firstTimestamp = new Date(e.firstTimestamp);
  if (typeof e.lastTimestamp === "string") e.lastTimestamp = new Date(e.lastTimestamp);
  return e;
}
