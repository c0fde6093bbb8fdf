/** metav1.Time's wire form: RFC 3339 in UTC with whole seconds (what the API server stores). */
export function rfc3339(d: Date): string {
  return d.toISOString().replace(/\.\d+Z$/, "Z");
}

/** metav1.MicroTime's wire form: RFC 3339 in UTC with six fractional digits (a Lease's renewTime). */
export function microTime(d: Date): string {
  return d.toISOString().replace(/Z$/, "000Z");
}
