// The side panel: one CronJob's why, history, next and spec, as the server sends them, and its actions.
import { type VNode } from "preact";
import { useEffect, useState } from "preact/hooks";
import { type Action, type ActionResult, type Detail, type Row, PAGE_WORDS as W } from "../view.ts";
import { e, fullFmt, ms } from "./base.ts";

export type DetailState =
  | { id: string; slot?: string; loading: true }
  | { id: string; slot?: string; loading: false; detail?: Detail; error?: string };

export function Panel({
  state,
  row,
  actions,
  close,
  onAction,
}: {
  state: DetailState;
  row: Row | undefined;
  actions: boolean;
  close: () => void;
  onAction: (a: Action, id: string) => Promise<ActionResult>;
}): VNode {
  const [result, setResult] = useState<(ActionResult & { action: Action }) | null>(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => setResult(null), [state.id]);
  const act = (a: Action) => {
    if (!confirm(W.confirm[a](state.id))) return;
    setBusy(true);
    onAction(a, state.id)
      .then((r) => setResult({ ...r, action: a }))
      .catch((err: unknown) => setResult({ ok: false, text: String(err), action: a }))
      .finally(() => setBusy(false));
  };
  const detail = state.loading ? undefined : state.detail;
  return e(
    "aside",
    { class: "panel", "data-detail": state.id },
    panelHeader(state, close),
    row ? rowFacts(row) : null,
    actions
      ? e(
          "div",
          { class: "actions" },
          (Object.entries(W.actions) as [Action, string][]).map(([a, label]) =>
            e("button", { type: "button", key: a, "data-action": a, disabled: busy, onClick: () => act(a) }, label),
          ),
        )
      : null,
    result
      ? e(
          "pre",
          {
            class: `result ${result.ok ? "ok" : "err"}`,
            "data-action-result": result.action,
            "data-ok": String(result.ok),
          },
          result.text,
        )
      : null,
    state.loading ? e("p", { class: "muted", "data-loading": "" }, W.loadingDetail) : null,
    !state.loading && state.error ? e("p", { class: "error", "data-detail-error": "" }, state.error) : null,
    detail ? detailSections(detail) : null,
  );
}

/** The CronJob's id, the slot asked about, and the close button. */
function panelHeader(state: DetailState, close: () => void): VNode {
  return e(
    "header",
    null,
    e(
      "div",
      null,
      e("h2", null, state.id),
      state.slot
        ? e(
            "div",
            { class: "slot", "data-detail-slot": state.slot },
            W.slot(fullFmt.format(ms(state.slot)), state.slot),
          )
        : null,
    ),
    e("button", { type: "button", class: "close", onClick: close, title: W.close, "data-close": "" }, "×"),
  );
}

/** What the fleet's row says of it: its schedule, suspended, how its last run ended. */
function rowFacts(row: Row): VNode {
  return e(
    "div",
    { class: "panel-facts" },
    e("span", null, row.schedule),
    row.suspended ? e("span", { class: "badge suspended-badge" }, W.suspended) : null,
    row.last ? e("span", { class: `badge last-${row.last}` }, W.last(row.last)) : null,
  );
}

const section = (title: string, attr: string, text: string | undefined): VNode =>
  e("section", null, e("h3", null, title), e("pre", { [attr]: "" }, text ?? ""));

/** The answers the plugin prints (why, history, next), then the spec, a field a row. */
function detailSections(detail: Detail): VNode[] {
  return [
    section(W.sections.why, "data-why", detail.why.text),
    section(W.sections.history, "data-history", detail.history.text),
    section(W.sections.next, "data-next", detail.next.text),
    e(
      "section",
      null,
      e("h3", null, W.sections.spec),
      e(
        "table",
        { class: "spec", "data-spec": "" },
        e(
          "tbody",
          null,
          detail.spec.map((f, i) => e("tr", { key: i }, e("th", null, f.field), e("td", null, f.value))),
        ),
      ),
    ),
  ];
}
