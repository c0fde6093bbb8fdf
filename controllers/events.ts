// The Events the CronJob controller emits: their reasons and types are one typed list, EVENT_REASONS in
// api/v1/reasons.ts (docs/using-cronjobs.md's list is tested against it). Messages quote user values (schedules, API
// errors); they are bounded so a huge value can never turn into a huge Event or a status the API server refuses
// (events.k8s.io caps a note at 1 kB).
import { EVENT_REASONS, type EventReason } from "../api/v1/index.ts";
import type { EventSubject, EventType, Recorder } from "../runtime/events/types.ts";

/** An Event a step decided on, emitted by the commit step. */
export interface EventDecision {
  reason: EventReason;
  message: string;
  /**
   * Whether it is routine (its reason row's `routine` unless set here): a failed Job's SawCompletedJob and a Job
   * Replace deleted are not, though their reasons are, because they report what a user may need to act on.
   */
  routine?: boolean;
}

/** Longest Event message written; longer ones are cut with a marker. */
export const MAX_EVENT_MESSAGE = 1024;

/** Cut `s` to at most `max` characters, saying how much was left out. */
export function bounded(s: string, max: number): string {
  if (s.length <= max) return s;
  const marker = `… (${s.length - max} more characters)`;
  return s.slice(0, Math.max(0, max - marker.length)) + marker;
}

/** Whether an Event is routine: the decision's own say, else its reason row's. */
export function isRoutine(e: Readonly<EventDecision>): boolean {
  const row = EVENT_REASONS[e.reason];
  return e.routine ?? ("routine" in row && row.routine);
}

/** Emits one of the controller's Events through the recorder, with its declared type and a bounded message. */
export function emitEvent(
  recorder: Recorder,
  obj: EventSubject,
  reason: EventReason,
  message: string,
  routine?: boolean,
): void {
  const type: EventType = EVENT_REASONS[reason].type;
  const e: EventDecision = { reason, message, ...(routine === undefined ? {} : { routine }) };
  recorder.event(obj, type, reason, bounded(message, MAX_EVENT_MESSAGE), isRoutine(e) ? { routine: true } : undefined);
}
