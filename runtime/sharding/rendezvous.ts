// Rendezvous (highest random weight) hashing: a namespace belongs to the member whose hash with it is highest.
// Every replica computes the same owner from the same members, with no table to agree on; a member that joins
// takes from each other member about 1/N of its namespaces, and one that leaves gives away only its own.
import { createHash } from "node:crypto";

/** The weight of `member` for `key`: the first 64 bits of SHA-256 over both (stable across processes and versions). */
function weight(member: string, key: string): bigint {
  return createHash("sha256").update(member).update("\0").update(key).digest().readBigUInt64BE(0);
}

/** The member that owns `key`, or undefined when there is none. Ties (never seen with SHA-256) go to the lower name. */
export function ownerOf(key: string, members: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestWeight = -1n;
  for (const m of members) {
    const w = weight(m, key);
    if (w > bestWeight || (w === bestWeight && best !== undefined && m < best)) {
      best = m;
      bestWeight = w;
    }
  }
  return best;
}
