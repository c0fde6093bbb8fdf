// The recorder interface controllers depend on (client-go's record.EventRecorder), so reconcilers can
// be handed either the real EventRecorder or a FakeRecorder in tests.
import type { V1ObjectReference } from "@kubernetes/client-node";

export type EventType = "Normal" | "Warning";

/** Any Kubernetes object; typed client-node objects (V1ConfigMap, ...) fit as they are. */
interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; namespace?: string; uid?: string; resourceVersion?: string };
}

/** What an event can be about: an object, or a reference to one. */
export type EventSubject = KubeObject | V1ObjectReference;

/** How an event is written, beyond its type. */
export interface EventOptions {
  /**
   * A routine event: one that reports nothing wrong and that the controller keeps a record of elsewhere (a run
   * created, ended, cleaned up). The routine events of one object share a budget of their own (three, then one per
   * 5 minutes: client-go's spam rate), new Events and count updates alike, so an object that does the same thing
   * every minute costs the API server an Event write every 5 minutes, not one per occurrence, while one that acts
   * hourly keeps every Event. Occurrences left out still count in the next write's `count`.
   */
  routine?: boolean;
}

export interface Recorder {
  /** Record an event about obj. Never throws and never waits for the API server. */
  event(obj: EventSubject, type: EventType, reason: string, message: string, o?: EventOptions): void;
  /** As event(), with a printf-style message (%s %d %v %q %f %t %%). */
  eventf(obj: EventSubject, type: EventType, reason: string, fmt: string, ...args: unknown[]): void;
}
