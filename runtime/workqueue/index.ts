export { type RateLimiter } from "./rate-limiters.ts";
export { RateLimitingQueue } from "./rate-limiting-queue.ts";
