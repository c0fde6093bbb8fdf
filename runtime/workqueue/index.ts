export { MinHeap } from "./heap.ts";
export { Queue, type GetResult } from "./queue.ts";
export { DelayingQueue } from "./delaying-queue.ts";
export {
  BucketRateLimiter,
  DefaultControllerRateLimiter,
  ItemExponentialFailureRateLimiter,
  MaxOfRateLimiter,
  type RateLimiter,
} from "./rate-limiters.ts";
export { RateLimitingQueue } from "./rate-limiting-queue.ts";
