// How the plugin prints time, an instant and a duration, alike in every answer, command and the dashboard. In the
// model, below them all: while they lived in the history answer, fourteen modules imported it for these alone.
/** RFC 3339 in UTC, whole seconds: how the plugin prints an instant. */
export const iso = (d: Date) => `${d.toISOString().slice(0, 19)}Z`;

/** kubectl's duration style: 45s, 3m12s, 2h5m, 3d4h. */
export function humanDuration(seconds: number): string {
  if (seconds < 60) return `${seconds}s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m${seconds % 60 ? `${seconds % 60}s` : ""}`;
  if (seconds < 86400) {
    const m = Math.floor((seconds % 3600) / 60);
    return `${Math.floor(seconds / 3600)}h${m ? `${m}m` : ""}`;
  }
  const h = Math.floor((seconds % 86400) / 3600);
  return `${Math.floor(seconds / 86400)}d${h ? `${h}h` : ""}`;
}
