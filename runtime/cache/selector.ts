// Label selectors in their string form ("app=web,tier!=db,env in (a,b),!legacy,track").

interface Requirement {
  key: string;
  op: "=" | "!=" | "in" | "notin" | "exists" | "!";
  values: string[];
}
export type LabelSelector = Requirement[];

export function parseSelector(s: string): LabelSelector {
  const reqs: LabelSelector = [];
  // Split on commas outside parentheses.
  const parts: string[] = [];
  let depth = 0;
  let cur = "";
  for (const ch of s) {
    if (ch === "(") depth++;
    if (ch === ")") depth--;
    if (ch === "," && depth === 0) {
      parts.push(cur);
      cur = "";
    } else cur += ch;
  }
  if (cur.trim()) parts.push(cur);
  for (const raw of parts) {
    const p = raw.trim();
    let m: RegExpExecArray | null;
    if ((m = /^([^\s!=()]+)\s+(in|notin)\s+\(([^)]*)\)$/.exec(p))) {
      reqs.push({
        key: m[1]!,
        op: m[2] as "in" | "notin",
        values: m[3]!
          .split(",")
          .map((v) => v.trim())
          .filter(Boolean),
      });
    } else if ((m = /^([^\s!=]+)\s*!=\s*(\S*)$/.exec(p))) {
      reqs.push({ key: m[1]!, op: "!=", values: [m[2]!] });
    } else if ((m = /^([^\s!=]+)\s*==?\s*(\S*)$/.exec(p))) {
      reqs.push({ key: m[1]!, op: "=", values: [m[2]!] });
    } else if ((m = /^!\s*(\S+)$/.exec(p))) {
      reqs.push({ key: m[1]!, op: "!", values: [] });
    } else if (/^[^\s!=()]+$/.test(p)) {
      reqs.push({ key: p, op: "exists", values: [] });
    } else {
      throw new Error(`invalid label selector "${s}": cannot parse "${p}"`);
    }
  }
  return reqs;
}

export function matchesSelector(sel: LabelSelector, labels: Readonly<Record<string, string>>): boolean {
  return sel.every((r) => {
    const has = Object.prototype.hasOwnProperty.call(labels, r.key);
    const v = labels[r.key];
    switch (r.op) {
      case "=":
        return has && v === r.values[0];
      case "!=":
        return !has || v !== r.values[0];
      case "in":
        return has && r.values.includes(v!);
      case "notin":
        return !has || !r.values.includes(v!);
      case "exists":
        return has;
      case "!":
        return !has;
    }
  });
}
