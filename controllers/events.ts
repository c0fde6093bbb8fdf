// The Events the CronJob controller records: one typed list (docs/using-cronjobs.md's list is tested against it).
// Messages quote user values (schedules, API errors); they are bounded so a huge value can never turn
// into a huge Event or a status the API server refuses (events.k8s.io caps a note at 1 kB).
import type { EventSubject, EventType, Recorder } from "../runtime/events/types.ts";

export const EVENT_REASONS = {
  SuccessfulCreate: "Normal",
  FailedCreate: "Warning",
  JobWarning: "Warning",
  SuccessfulDelete: "Normal",
  FailedDelete: "Warning",
  SawCompletedJob: "Normal",
  MissingJob: "Normal",
  UnexpectedJob: "Warning",
  JobAlreadyActive: "Normal",
  MissSchedule: "Warning",
  TooManyMissedTimes: "Warning",
  UnknownTimeZone: "Warning",
  UnparseableSchedule: "Warning",
  RunNow: "Normal",
  RunNowDeferred: "Normal",
  RunNowRefused: "Warning",
  StoppedAfterFailures: "Warning",
  Resumed: "Normal",
  BackfillStarted: "Normal",
  BackfillComplete: "Normal",
  BackfillCancelled: "Normal",
  BackfillRefused: "Warning",
} as const satisfies Record<string, EventType>;

type EventReason = keyof typeof EVENT_REASONS;

/** An Event a step decided on, recorded by the commit step. */
export interface EventDecision {
  reason: EventReason;
  message: string;
}

/** Longest Event message written; longer ones are cut with a marker. */
export const MAX_EVENT_MESSAGE = 1024;

/** Cut `s` to at most `max` characters, saying how much was left out. */
export function bounded(s: string, max: number): string {
  if (s.length <= max) return s;
  const marker = `… (${s.length - max} more characters)`;
  return s.slice(0, Math.max(0, max - marker.length)) + marker;
}

/** Records the controller's Events with their declared type and a bounded message. */
export function recordEvent(recorder: Recorder, obj: EventSubject, reason: EventReason, message: string): void {
  recorder.event(obj, EVENT_REASONS[reason], reason, bounded(message, MAX_EVENT_MESSAGE));
}
