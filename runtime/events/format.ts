// A small Go-flavoured printf for Eventf: messages are written by people who know klog/record.Eventf,
// so %s/%d/%v/%q behave the Go way rather than util.format's (which has no %v and treats %d as Number()).
import { inspect } from "node:util";

function asValue(v: unknown): string {
  if (typeof v === "string") return v;
  if (v instanceof Error) return v.message;
  if (v === null || v === undefined) return "<nil>";
  if (v instanceof Date) return v.toISOString();
  if (typeof v === "object") {
    // Objects with their own toString (URL, Quantity-like wrappers) read better that way than as JSON.
    const toString: unknown = (v as { toString?: unknown }).toString;
    if (!Array.isArray(v) && typeof toString === "function" && toString !== Object.prototype.toString) {
      return String(v);
    }
    try {
      return JSON.stringify(v) ?? inspect(v);
    } catch {
      return inspect(v, { depth: 2, breakLength: Infinity });
    }
  }
  return String(v);
}

function asInteger(v: unknown): string {
  if (typeof v === "bigint") return v.toString();
  if (typeof v === "number" && Number.isFinite(v)) return Math.trunc(v).toString();
  if (typeof v === "boolean") return `%!d(bool=${v})`;
  const n = Number(v);
  return Number.isFinite(n) && typeof v !== "object" ? Math.trunc(n).toString() : `%!d(${asValue(v)})`;
}

/** Formats %s %v %d %q %f %t %%; missing arguments read "%!v(MISSING)", extras are appended. */
export function sprintf(fmt: string, ...args: unknown[]): string {
  let i = 0;
  const out = fmt.replace(/%(\.\d+)?([svdqftx%])/g, (_m, prec: string | undefined, verb: string) => {
    if (verb === "%") return "%";
    if (i >= args.length) return `%!${verb}(MISSING)`;
    const v = args[i++];
    switch (verb) {
      case "d":
        return asInteger(v);
      case "q":
        return JSON.stringify(asValue(v));
      case "f": {
        const n = Number(v);
        return Number.isFinite(n) ? n.toFixed(prec ? Number(prec.slice(1)) : 6) : `%!f(${asValue(v)})`;
      }
      case "x":
        return typeof v === "number" || typeof v === "bigint"
          ? v.toString(16)
          : Buffer.from(asValue(v)).toString("hex");
      case "t":
        return String(Boolean(v));
      default:
        return asValue(v);
    }
  });
  if (i < args.length) return `${out} %!(EXTRA ${args.slice(i).map(asValue).join(", ")})`;
  return out;
}
