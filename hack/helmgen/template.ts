// A YAML tree with Helm template parts in it, and its emitter. The chart's templates are config/'s rendered
// objects with a few places replaced by values or made conditional; everything else is emitted by the yaml
// library, so the chart renders exactly the objects config/ does where no value changes them.
import { isDeepStrictEqual } from "node:util";
import { stringify } from "yaml";
import { isObj } from "../../runtime/objects.ts";

/** A conjunction of Helm conditions (each one a pipeline such as `.Values.webhook.enable`). */
export type When = string[];

export type Node = Lit | TMap | TList | Expr | Block | Choice;
/** A plain value, emitted as YAML (literal text escaped and names substituted, see Emitter). */
export type Lit = { t: "lit"; v: unknown };
/** A map entry, or `inline`: a pipeline whose YAML map output is inlined here (e.g. the labels helper). */
export type Entry = { key: string; value: Node; when?: When } | { inline: string; when?: When };
export type TMap = { t: "map"; entries: Entry[] };
export type Item = { value: Node; when?: When };
/** A list; `extra` is a values path whose list items are appended (e.g. `.Values.env`). */
export type TList = { t: "list"; items: Item[]; extra?: string };
/** A scalar given as template text, e.g. `{{ .Values.replicaCount }}`. */
export type Expr = { t: "expr"; text: string };
/** A block taken from a values path with toYaml. */
export type Block = { t: "block"; path: string };
/** `then` when the condition holds, else `else`. */
export type Choice = { t: "choice"; when: When; then: Node; else: Node };

export const lit = (v: unknown): Lit => ({ t: "lit", v });
export const expr = (text: string): Expr => ({ t: "expr", text });
export const block = (path: string): Block => ({ t: "block", path });

/** A value as a tree whose maps and lists can be edited (one level; deeper levels stay literal). */
export function open(node: Node): Node {
  if (node.t !== "lit") return node;
  if (isObj(node.v)) return { t: "map", entries: Object.entries(node.v).map(([key, v]) => ({ key, value: lit(v) })) };
  if (Array.isArray(node.v)) return { t: "list", items: node.v.map((v) => ({ value: lit(v) })) };
  return node;
}

export function openMap(node: Node, where: string): TMap {
  const m = open(node);
  if (m.t !== "map") throw new Error(`${where}: expected a map, found ${describe(node)}`);
  return m;
}

export function openList(node: Node, where: string): TList {
  const l = open(node);
  if (l.t !== "list") throw new Error(`${where}: expected a list, found ${describe(node)}`);
  return l;
}

function describe(node: Node): string {
  return node.t === "lit" ? (JSON.stringify(node.v)?.slice(0, 80) ?? "nothing") : node.t;
}

/** The entry `key` of a map (opened in place), or undefined. */
export function entry(map: TMap, key: string): { key: string; value: Node; when?: When } | undefined {
  for (const e of map.entries) if ("key" in e && e.key === key) return e;
  return undefined;
}

/** Follow keys from a map, opening literal maps on the way; throws naming the path if one is missing. */
export function at(map: TMap, path: string[], where: string): TMap {
  let m = map;
  for (const [i, k] of path.entries()) {
    const e = entry(m, k);
    if (!e) throw new Error(`${where}: no ${path.slice(0, i + 1).join(".")}`);
    e.value = openMap(e.value, `${where}.${path.slice(0, i + 1).join(".")}`);
    m = e.value;
  }
  return m;
}

/** The literal value of `key` in a map node (literal or opened), or undefined. */
export function field(node: Node, key: string): unknown {
  if (node.t === "lit") return isObj(node.v) ? node.v[key] : undefined;
  if (node.t !== "map") return undefined;
  const e = entry(node, key);
  return e?.value.t === "lit" ? e.value.v : undefined;
}

export function removeEntry(map: TMap, key: string): unknown {
  const i = map.entries.findIndex((e) => "key" in e && e.key === key);
  if (i < 0) return undefined;
  const [e] = map.entries.splice(i, 1);
  return e && "key" in e && e.value.t === "lit" ? e.value.v : undefined;
}

/**
 * One tree for two variants of an object: equal parts stay literal, map keys and list items present in one
 * variant only are kept under `whenA` / `whenB`, and differing scalars become a choice.
 */
export function merge(a: unknown, b: unknown, whenA: When, whenB: When): Node {
  if (isDeepStrictEqual(a, b)) return lit(a);
  if (isObj(a) && isObj(b)) {
    const entries: Entry[] = [];
    for (const [key, v] of Object.entries(a)) {
      entries.push(key in b ? { key, value: merge(v, b[key], whenA, whenB) } : { key, value: lit(v), when: whenA });
    }
    for (const [key, v] of Object.entries(b)) if (!(key in a)) entries.push({ key, value: lit(v), when: whenB });
    return { t: "map", entries };
  }
  if (Array.isArray(a) && Array.isArray(b)) return { t: "list", items: mergeLists(a, b, whenA, whenB) };
  return { t: "choice", when: whenB, then: lit(b), else: lit(a) };
}

/** List items are the same item when equal, or when they are maps with the same `name` (containers, ports, env). */
function identity(v: unknown): string {
  if (isObj(v) && typeof v.name === "string") return `name:${v.name}`;
  return JSON.stringify(v);
}

/**
 * The longest common subsequence of two lists (by identity; the same item in both is merged), the rest of
 * each list kept in place under its condition.
 */
function mergeLists(a: unknown[], b: unknown[], whenA: When, whenB: When): Item[] {
  const ia = a.map(identity);
  const ib = b.map(identity);
  const n = a.length;
  const m = b.length;
  const lcs: number[][] = Array.from({ length: n + 1 }, () => new Array<number>(m + 1).fill(0));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lcs[i]![j] = ia[i] === ib[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
    }
  }
  const items: Item[] = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && ia[i] === ib[j]) {
      items.push({ value: merge(a[i], b[j], whenA, whenB) });
      i++;
      j++;
    } else if (j >= m || (i < n && lcs[i + 1]![j]! >= lcs[i]![j + 1]!)) {
      items.push({ value: lit(a[i]), when: whenA });
      i++;
    } else {
      items.push({ value: lit(b[j]), when: whenB });
      j++;
    }
  }
  return items;
}

export function and(...whens: Array<When | undefined>): When {
  const out: string[] = [];
  for (const w of whens) for (const c of w ?? []) if (!out.includes(c)) out.push(c);
  return out;
}

function condition(when: When): string {
  if (when.length === 1) return when[0]!;
  return `and ${when.map((c) => (/\s/.test(c) ? `(${c})` : c)).join(" ")}`;
}

/**
 * Emits a tree as template text. Literal text is escaped (a `{{` in a description must not be read as a
 * template action) and then passed through `literal`, which substitutes names and the namespace.
 */
export class Emitter {
  private readonly literal: (text: string) => string;

  constructor(literal: (text: string) => string) {
    this.literal = literal;
  }

  document(node: TMap): string {
    return this.map(node, 0).join("\n") + "\n";
  }

  private text(yaml: string, pad: string): string[] {
    const escaped = yaml.replace(/\{\{/g, '{{ "{{" }}');
    return this.literal(escaped)
      .replace(/\n$/, "")
      .split("\n")
      .map((l) => pad + l);
  }

  /** Lines under their conditions; consecutive parts under the same condition share one `if`. */
  private guarded(parts: Array<{ when?: When; lines: string[] }>, pad: string): string[] {
    const out: string[] = [];
    let open: string | undefined;
    for (const { when, lines } of parts) {
      const c = when?.length ? condition(when) : undefined;
      if (c !== open) {
        if (open !== undefined) out.push(`${pad}{{- end }}`);
        if (c !== undefined) out.push(`${pad}{{- if ${c} }}`);
        open = c;
      }
      out.push(...lines);
    }
    if (open !== undefined) out.push(`${pad}{{- end }}`);
    return out;
  }

  private map(node: TMap, indent: number): string[] {
    const pad = " ".repeat(indent);
    const parts = node.entries.map((e) => ({
      when: e.when,
      lines: "inline" in e ? [`${pad}{{- ${e.inline} | nindent ${indent} }}`] : this.entry(e.key, e.value, indent),
    }));
    return this.guarded(parts, pad);
  }

  private entry(key: string, value: Node, indent: number): string[] {
    const pad = " ".repeat(indent);
    const k = stringify({ [key]: null }).replace(/: null\n$/, "");
    switch (value.t) {
      case "lit":
        return this.text(stringify({ [key]: value.v }, { lineWidth: 0, aliasDuplicateObjects: false }), pad);
      case "expr":
        return [`${pad}${k}: ${value.text}`];
      case "block":
        return [`${pad}${k}:`, `${pad}  {{- toYaml ${value.path} | nindent ${indent + 2} }}`];
      case "map":
        return value.entries.length ? [`${pad}${k}:`, ...this.map(value, indent + 2)] : [`${pad}${k}: {}`];
      case "list":
        return value.items.length || value.extra
          ? [`${pad}${k}:`, ...this.list(value, indent + 2)]
          : [`${pad}${k}: []`];
      case "choice": {
        const inline = this.inlineChoice(value);
        if (inline !== undefined) return [`${pad}${k}: ${inline}`];
        return [
          `${pad}{{- if ${condition(value.when)} }}`,
          ...this.entry(key, value.then, indent),
          `${pad}{{- else }}`,
          ...this.entry(key, value.else, indent),
          `${pad}{{- end }}`,
        ];
      }
    }
  }

  /** `{{ if c }}a{{ else }}b{{ end }}` when both sides are one-line scalars. */
  private inlineChoice(c: Choice): string | undefined {
    const one = (n: Node): string | undefined => {
      if (n.t === "expr") return n.text;
      if (n.t !== "lit" || (typeof n.v === "object" && n.v !== null)) return undefined;
      const lines = this.text(stringify([n.v], { lineWidth: 0 }), "");
      return lines.length === 1 ? lines[0]!.slice(2) : undefined;
    };
    const a = one(c.then);
    const b = one(c.else);
    if (a === undefined || b === undefined) return undefined;
    return `{{ if ${condition(c.when)} }}${a}{{ else }}${b}{{ end }}`;
  }

  private list(node: TList, indent: number): string[] {
    const pad = " ".repeat(indent);
    const out = this.guarded(
      node.items.map((item) => ({ when: item.when, lines: this.item(item.value, indent) })),
      pad,
    );
    if (node.extra) {
      out.push(`${pad}{{- with ${node.extra} }}`, `${pad}{{- toYaml . | nindent ${indent} }}`, `${pad}{{- end }}`);
    }
    return out;
  }

  private item(value: Node, indent: number): string[] {
    const pad = " ".repeat(indent);
    switch (value.t) {
      case "lit":
        return this.text(stringify([value.v], { lineWidth: 0, aliasDuplicateObjects: false }), pad);
      case "expr":
        return [`${pad}- ${value.text}`];
      case "block":
        return [`${pad}-`, `${pad}  {{- toYaml ${value.path} | nindent ${indent + 2} }}`];
      case "map": {
        const lines = this.map(value, indent + 2);
        const first = lines[0];
        if (first === undefined) return [`${pad}- {}`];
        if (first.trimStart().startsWith("{{")) return [`${pad}-`, ...lines];
        return [`${pad}- ${first.slice(indent + 2)}`, ...lines.slice(1)];
      }
      case "list":
        return [`${pad}-`, ...this.list(value, indent + 2)];
      case "choice": {
        const inline = this.inlineChoice(value);
        if (inline !== undefined) return [`${pad}- ${inline}`];
        return [
          `${pad}{{- if ${condition(value.when)} }}`,
          ...this.item(value.then, indent),
          `${pad}{{- else }}`,
          ...this.item(value.else, indent),
          `${pad}{{- end }}`,
        ];
      }
    }
  }
}
