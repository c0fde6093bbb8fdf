// Where events are written (client-go's record.EventSink). The recorder depends only on this
// interface, so unit tests inject an in-memory sink and need no server.
import type { CoreV1Event } from "@kubernetes/client-node";
import type { Client } from "../client.ts";
import { type KubeObject, Kinds } from "../kinds.ts";
import type { EventPatch } from "./correlator.ts";

export interface EventSink {
  /** Create the Event; rejects with an APIError when the server answers an error status. */
  create(event: CoreV1Event): Promise<CoreV1Event>;
  /** Update an existing Event's count, lastTimestamp and message; an APIError 404 when it is gone. */
  patch(event: CoreV1Event, patch: EventPatch): Promise<CoreV1Event>;
}

/**
 * Writes Events through the runtime's Client: one keep-alive connection pool shared with the
 * controllers, its APIError, and rest_client_requests_total. A merge patch: the fields are plain
 * scalars and a merge patch does not need to know whether they are already set.
 */
export class ClientEventSink implements EventSink {
  readonly #client: Client;

  constructor(client: Client) {
    this.#client = client;
  }

  async create(event: CoreV1Event): Promise<CoreV1Event> {
    const body: KubeObject = { ...event, metadata: { ...event.metadata } };
    return withDates(await this.#client.create(Kinds.Event, body));
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
  const { firstTimestamp, lastTimestamp } = o;
  if (typeof firstTimestamp === "string") o.firstTimestamp = new Date(firstTimestamp);
  if (typeof lastTimestamp === "string") o.lastTimestamp = new Date(lastTimestamp);
  if (!isEvent(o)) throw new Error(`the API server answered an Event write with a ${o.kind ?? "kindless object"}`);
  return o;
}

/** What the recorder reads back from an Event the API server returned (it always has these). */
function isEvent(o: KubeObject): o is KubeObject & CoreV1Event {
  return typeof o.metadata === "object" && typeof o.involvedObject === "object" && o.involvedObject !== null;
}
