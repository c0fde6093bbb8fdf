export * from "./groupversion_info.ts";
export * from "./meta.ts";
export * from "./cronjob_types.ts";
export * from "./runnow.ts";
export * from "./job.ts";
export * from "./backfill.ts";
export * from "./schedules.ts";
export * from "./recentruns.ts";
