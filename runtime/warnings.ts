// API warnings: what a kube-apiserver says about a request it served (a deprecated API or field, an unknown
// field it dropped, a value it will not honour), as RFC 7234 `Warning` headers, `299 - "text"`. client-go
// hands them to a WarningHandler; so does the Client here, so none is dropped silently.

/** The texts of the `299` warnings in `Warning` header values (each may hold several, comma-separated). */
export function parseWarningHeaders(values: readonly string[]): string[] {
  const out: string[] = [];
  for (const value of values) {
    let rest = value;
    for (;;) {
      // warn-code SP warn-agent SP warn-text [SP warn-date]
      const m = /^\s*(\d{3})\s+(\S+)\s+"((?:[^"\\]|\\.)*)"(?:\s+"[^"]*")?\s*(,|$)/.exec(rest);
      if (!m) break;
      if (m[1] === "299") out.push((m[3] ?? "").replace(/\\(.)/g, "$1"));
      rest = rest.slice(m[0].length);
      if (m[4] !== ",") break;
    }
  }
  return out;
}

/**
 * The header values named `name` of a response, one per header line: Node joins repeated headers with
 * ", ", which would cut a warning whose text holds a comma.
 */
export function headerValues(rawHeaders: readonly string[], name: string): string[] {
  const out: string[] = [];
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    if ((rawHeaders[i] ?? "").toLowerCase() === name) out.push(rawHeaders[i + 1] ?? "");
  }
  return out;
}
