/** metav1.Time's wire form: RFC 3339 in UTC with whole seconds (what the API server stores). */
export function rfc3339(d: Date): string {
  return d.toISOString().replace(/\.\d+Z$/, "Z");
}
