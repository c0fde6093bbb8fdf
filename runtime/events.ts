// Kubernetes Events for controllers: client-go's record.EventRecorder with its EventCorrelator
// (dedupe into counts, aggregation of similar events, spam filter), writing core/v1 Events in the
// background (in parallel, in order per object, retried through outages) so recording never blocks
// or fails a reconcile.
export {
  EventRecorder,
  DEFAULT_MAX_PENDING,
  DEFAULT_MAX_IN_FLIGHT,
  DEFAULT_MAX_TRIES,
  DEFAULT_BACKOFF_INITIAL_MS,
  DEFAULT_BACKOFF_MAX_MS,
  DROP_REASONS,
  isTransient,
  type DropReason,
  type EventRecorderOptions,
} from "./events/recorder.ts";
export { FakeRecorder, type FakeRecorderOptions } from "./events/fake.ts";
export { CoreV1EventSink, toAPIError, type EventSink } from "./events/sink.ts";
export {
  EventCorrelator,
  LRU,
  TokenBucket,
  eventKey,
  aggregateKey,
  spamKey,
  objectKey,
  eventName,
  metaTime,
  rfc3339,
  AGGREGATE_MESSAGE_PREFIX,
  DEFAULT_LRU_CACHE_SIZE,
  DEFAULT_SPAM_BURST,
  DEFAULT_SPAM_QPS,
  DEFAULT_UPDATE_BURST,
  DEFAULT_UPDATE_QPS,
  DEFAULT_AGGREGATE_MAX_EVENTS,
  DEFAULT_AGGREGATE_INTERVAL_MS,
  type CorrelatorOptions,
  type CorrelationResult,
  type EventPatch,
} from "./events/correlator.ts";
export { sprintf } from "./events/format.ts";
export {
  EventTypeNormal,
  EventTypeWarning,
  noopLogger,
  type EventType,
  type EventSubject,
  type KubeObject,
  type Recorder,
  type EventLogger,
} from "./events/types.ts";
