// The table and JSON views of a result.
import { format, toJson } from "./values.js";

/** Most rows the table draws; the summary says when there were more. */
export const TABLE_ROW_LIMIT = 1000;
/** Most characters of JSON the JSON view shows. */
const JSON_CHAR_LIMIT = 2_000_000;

/** Draws `result` as a table into `element`. */
export function renderTable(element, result) {
  element.replaceChildren();
  if (!result.fields.length) {
    const p = document.createElement("p");
    p.className = "muted";
    p.textContent = countersText(result.counters) || "No rows.";
    element.append(p);
    return;
  }
  const table = document.createElement("table");
  const head = table.createTHead().insertRow();
  for (const field of result.fields) {
    const th = document.createElement("th");
    th.textContent = field;
    head.append(th);
  }
  const body = table.createTBody();
  const shown = Math.min(result.rows.length, TABLE_ROW_LIMIT);
  for (let i = 0; i < shown; i++) {
    const tr = body.insertRow();
    for (const value of result.rows[i]) {
      const td = tr.insertCell();
      td.textContent = format(value);
      if (value === null) td.className = "null";
    }
  }
  element.append(table);
  if (result.rows.length > shown) {
    const p = document.createElement("p");
    p.className = "muted";
    p.textContent = `Showing the first ${shown} of ${result.rows.length} rows.`;
    element.append(p);
  }
}

/** Draws `result` as JSON (one object per row) into `pre`. */
export function renderJson(pre, result) {
  const rows = result.rows.map((row) => {
    const o = {};
    result.fields.forEach((f, i) => (o[f] = toJson(row[i])));
    return o;
  });
  let text = JSON.stringify(rows, null, 2);
  if (text.length > JSON_CHAR_LIMIT) text = text.slice(0, JSON_CHAR_LIMIT) + "\n… (cut: the result is larger than the view shows)";
  pre.textContent = text;
}

/** A summary of the write counters, e.g. `2 nodes created, 1 property set`. */
export function countersText(counters) {
  if (!counters) return "";
  const parts = [];
  for (const [key, value] of Object.entries(counters)) {
    if (typeof value === "number" && value > 0) parts.push(`${value} ${key.replace(/([A-Z])/g, " $1").toLowerCase()}`);
  }
  return parts.join(", ");
}
