// A CronJob's row: its label (name, badges) and its track of marks and shades.
import { h, type VNode } from "preact";
import { type Attention, type Row, type RowMarks, type RowShaping, SHAPING_BADGES, PAGE_WORDS as W } from "../view.ts";
import { ROW_H, type Scale, e } from "./base.ts";
import { markNode, shadeNodes } from "./marks.ts";

/** Why -A's verdict for a suspended row when its cause is that: the suspended badge says it. */
const suspendedVerdict = (row: Row): Attention | undefined =>
  row.suspended && row.attention?.suspended ? row.attention : undefined;

/**
 * A suspended row's badge. When why -A's cause for it is that it is suspended, this one badge says why's verdict too
 * (its words, its cause, the look of a row that needs attention): two badges saying "suspended" read as two problems.
 */
function SuspendedBadge({ row }: { row: Row }): VNode | null {
  if (!row.suspended) return null;
  const a = suspendedVerdict(row);
  return e(
    "span",
    {
      class: `badge suspended-badge${a ? " attention" : ""}`,
      "data-suspended": "",
      ...(a ? { title: a.text, "data-attention": a.cause } : {}),
    },
    W.suspended,
  );
}

/** What shapes its schedule (its window, its end, its upstreams): a small badge each, its words the title. */
function ShapingBadges({ shaping }: { shaping: RowShaping | undefined }): VNode[] | null {
  if (!shaping) return null;
  return (Object.keys(SHAPING_BADGES) as (keyof RowShaping)[]).flatMap((k) => {
    const words = shaping[k];
    if (words === undefined) return [];
    const title = Array.isArray(words) ? words.join("\n") : words;
    return [e("span", { class: `badge shaping-badge`, title, "data-shaping": k }, SHAPING_BADGES[k])];
  });
}

function AttentionBadge({ attention }: { attention: Attention | null | undefined }): VNode | null {
  if (attention === undefined) return e("span", { class: "unread", title: W.notRead, "data-unread": "" });
  if (attention === null) return null;
  return e(
    "span",
    { class: "badge attention", title: attention.text, "data-attention": attention.cause },
    attention.cause,
  );
}

interface RowProps {
  row: Row;
  top: number;
  marks: RowMarks | undefined;
  showNs: boolean;
  scale: Scale;
  width: number;
  now: number;
  selected: boolean;
  open: (id: string, slot?: string) => void;
}

export function RowView({ row, top, marks, showNs, scale, width, now, selected, open }: RowProps): VNode {
  const onSlot = (slot: string) => open(row.id, slot);
  return e(
    "div",
    {
      class: `row${selected ? " selected" : ""}${row.suspended ? " suspended" : ""}`,
      "data-id": row.id,
      style: { top: `${top}px` },
    },
    e(
      "div",
      { class: "label-col row-label" },
      e(
        "button",
        {
          class: "name",
          type: "button",
          title: `${row.id} — ${row.schedule}`,
          onClick: () => open(row.id),
          "data-open": row.id,
        },
        showNs ? e("span", { class: "ns" }, `${row.namespace}/`) : null,
        row.name,
      ),
      h(SuspendedBadge, { row }),
      ShapingBadges({ shaping: row.shaping }),
      suspendedVerdict(row) ? null : h(AttentionBadge, { attention: row.attention }),
    ),
    e(
      "svg",
      { width, height: ROW_H, class: "track", "data-marks": marks ? "loaded" : "pending" },
      marks ? shadeNodes(marks.shades, scale, width) : null,
      marks ? marks.marks.map((m) => markNode(m, scale, now, width, onSlot)) : null,
    ),
  );
}
