// EXPLAIN / PROFILE plans drawn as an operator tree: each operator with its
// details, rows, time and workers, and a bar for its share of the time.

function arg(op, ...names) {
  const args = op.arguments || op.args || {};
  for (const n of names) {
    if (op[n] !== undefined && op[n] !== null) return op[n];
    if (args[n] !== undefined && args[n] !== null) return args[n];
  }
  return undefined;
}

function num(v) {
  if (v === undefined || v === null) return undefined;
  if (typeof v === "object" && "_value" in v) v = v._value;
  const n = Number(v);
  return Number.isFinite(n) ? n : undefined;
}

/** One operator of a plan in a common shape: `{ name, details, rows, estimated, timeMs, workers, children }`. */
export function normalize(op) {
  const timeMs = num(arg(op, "timeMs", "TimeMs"));
  const timeNs = num(arg(op, "time", "Time"));
  return {
    name: String(arg(op, "operatorType", "operator") || "?").replace(/@.*$/, ""),
    details: arg(op, "details", "Details"),
    rows: num(arg(op, "records", "rows", "Rows")),
    estimated: num(arg(op, "estimatedRows", "EstimatedRows")),
    timeMs: timeMs !== undefined ? timeMs : timeNs !== undefined ? timeNs / 1e6 : undefined,
    workers: num(arg(op, "workers", "Workers")),
    morsels: num(arg(op, "morsels", "Morsels")),
    identifiers: op.identifiers || [],
    children: (op.children || []).map(normalize),
  };
}

function total(op) {
  return (op.timeMs || 0) + op.children.reduce((s, c) => s + total(c), 0);
}

function count(op) {
  return 1 + op.children.reduce((s, c) => s + count(c), 0);
}

const fmt = (n, digits = 0) => (n === undefined ? "–" : n.toLocaleString("en-US", { maximumFractionDigits: digits }));

/** Draws `plan` (the answer's queryPlan or profiledQueryPlan) into `element`. */
export function renderPlan(element, plan, profiled) {
  element.replaceChildren();
  if (!plan) {
    const p = document.createElement("p");
    p.className = "muted";
    p.innerHTML = "Run a statement with <code>EXPLAIN</code> or <code>PROFILE</code> in front to see its plan.";
    element.append(p);
    return;
  }
  const root = normalize(plan);
  const sum = total(root);
  const head = document.createElement("p");
  head.className = "plan-head";
  head.textContent = profiled
    ? `PROFILE: ${count(root)} operators, ${fmt(sum, 3)} ms in operators`
    : `EXPLAIN: ${count(root)} operators (estimates only; PROFILE runs the statement and measures)`;
  element.append(head);
  const list = document.createElement("ul");
  list.className = "plan-tree";
  list.append(drawOperator(root, sum, profiled));
  element.append(list);
}

function drawOperator(op, sum, profiled) {
  const li = document.createElement("li");
  const box = document.createElement("div");
  box.className = "operator";
  box.dataset.testid = "operator";
  box.dataset.operator = op.name;
  const name = document.createElement("div");
  name.className = "op-name";
  name.textContent = op.name;
  box.append(name);
  if (op.details) {
    const d = document.createElement("div");
    d.className = "op-details";
    d.textContent = String(op.details);
    box.append(d);
  }
  const stats = document.createElement("div");
  stats.className = "op-stats";
  const parts = [];
  if (profiled) {
    parts.push(`rows ${fmt(op.rows)}`, `${fmt(op.timeMs, 3)} ms`, `workers ${fmt(op.workers)}`);
    if (op.morsels !== undefined) parts.push(`morsels ${fmt(op.morsels)}`);
  }
  if (op.estimated !== undefined) parts.push(`est. ${fmt(op.estimated)} rows`);
  stats.textContent = parts.join(" · ");
  box.append(stats);
  if (profiled) {
    const share = sum > 0 ? (op.timeMs || 0) / sum : 0;
    const bar = document.createElement("div");
    bar.className = "op-bar";
    bar.title = `${(share * 100).toFixed(1)}% of the time in operators`;
    const fill = document.createElement("span");
    fill.style.width = `${(share * 100).toFixed(1)}%`;
    bar.append(fill);
    const pct = document.createElement("span");
    pct.className = "op-share";
    pct.textContent = `${(share * 100).toFixed(1)}%`;
    box.append(bar, pct);
  }
  li.append(box);
  if (op.children.length) {
    const ul = document.createElement("ul");
    for (const c of op.children) ul.append(drawOperator(c, sum, profiled));
    li.append(ul);
  }
  return li;
}
