export * from "./groupversion_info.ts";
export * from "./cronjob_types.ts";
export * from "./conversion.ts";
