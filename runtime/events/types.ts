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

export interface Recorder {
  /** Record an event about obj. Never throws and never waits for the API server. */
  event(obj: EventSubject, type: EventType, reason: string, message: string): void;
  /** As event(), with a printf-style message (%s %d %v %q %f %t %%). */
  eventf(obj: EventSubject, type: EventType, reason: string, fmt: string, ...args: unknown[]): void;
}
