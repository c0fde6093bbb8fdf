export { MinHeap, type HeapItem } from "./heap.ts";
export { Queue, type GetResult, type QueueOptions } from "./queue.ts";
export { DelayingQueue } from "./delaying-queue.ts";
export {
  BucketRateLimiter,
  DefaultControllerRateLimiter,
  ItemExponentialFailureRateLimiter,
  MaxOfRateLimiter,
  type RateLimiter,
} from "./rate-limiters.ts";
export { RateLimitingQueue, type RateLimitingQueueOptions } from "./rate-limiting-queue.ts";
export { noopMetrics, PrometheusQueueMetrics, type QueueMetrics } from "./metrics.ts";
