// The page: login beside the editor, statements run through the HTTP Query
// API, results as table / JSON / graph / plan, schema and history panels.
import "./style.css";
import { Api, QueryError } from "./api.js";
import { Editor } from "./editor.js";
import { GraphView } from "./graph.js";
import { renderPlan } from "./plan.js";
import { editorSchema, loadSchema, renderSchema } from "./schema.js";
import { countersText, renderJson, renderTable } from "./table.js";

const $ = (id) => document.getElementById(id);
const HISTORY_KEY = "rhizome.history";
const HISTORY_LIMIT = 100;

const api = new Api("");
let history = loadHistory();
let historyCursor = history.length;
let schema = null;
let view = "table";
let lastResult = null;

const editor = new Editor($("editor"), {
  value: history[history.length - 1] || "MATCH (n) RETURN n LIMIT 25",
  onRun: () => run(),
  onHistory: (step) => walkHistory(step),
});

const graphView = new GraphView(
  {
    container: $("graph"),
    legend: $("graph-legend"),
    stats: $("graph-stats"),
    inspector: $("inspector"),
    layoutButton: $("layout-toggle"),
  },
  (node) => expand(node),
);

// ---- login -------------------------------------------------------------

async function login(user, password, database) {
  $("login-error").textContent = "";
  $("login-submit").disabled = true;
  try {
    await api.login(user, password, database);
    sessionStorage.setItem("rhizome.login", JSON.stringify({ authorization: api.authorization, user, database }));
    loggedIn();
  } catch (e) {
    $("login-error").textContent = e instanceof QueryError ? `${e.code}: ${e.message}` : String(e);
  } finally {
    $("login-submit").disabled = false;
  }
}

function loggedIn() {
  document.body.classList.add("connected");
  $("login").hidden = true;
  $("logout").hidden = false;
  $("whoami").textContent = `${api.user} @ ${api.database}`;
  $("database").value = api.database;
  editor.focus();
  refreshSchema();
}

$("login").addEventListener("submit", (e) => {
  e.preventDefault();
  login($("login-user").value, $("login-password").value, $("database").value.trim() || "neo4j");
});

$("logout").addEventListener("click", () => {
  api.logout();
  sessionStorage.removeItem("rhizome.login");
  document.body.classList.remove("connected");
  $("login").hidden = false;
  $("logout").hidden = true;
  $("whoami").textContent = "";
  $("side-schema").innerHTML = '<p class="muted">Log in to see the schema.</p>';
  $("login-password").focus();
});

$("database").addEventListener("change", () => {
  if (!api.authorization) return;
  api.database = $("database").value.trim() || "neo4j";
  $("whoami").textContent = `${api.user} @ ${api.database}`;
  refreshSchema();
});

// ---- schema ------------------------------------------------------------

async function refreshSchema() {
  try {
    schema = await loadSchema(api);
    renderSchema($("side-schema"), schema, (statement) => {
      editor.value = statement;
      run();
    });
    editor.setSchema(editorSchema(schema, parameterNames()));
  } catch (e) {
    $("side-schema").textContent = `The schema could not be read: ${e.message}`;
  }
}

// ---- parameters --------------------------------------------------------

$("params").value = localStorage.getItem("rhizome.params") || "{}";
$("toggle-params").addEventListener("click", () => ($("params-box").hidden = !$("params-box").hidden));
$("params").addEventListener("change", () => {
  localStorage.setItem("rhizome.params", $("params").value);
  if (schema) editor.setSchema(editorSchema(schema, parameterNames()));
});

function parameters() {
  const text = $("params").value.trim() || "{}";
  let value;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new QueryError("Rhizome.Page.InvalidParameters", `The parameters are not valid JSON: ${e.message}`);
  }
  if (value === null || typeof value !== "object" || Array.isArray(value))
    throw new QueryError("Rhizome.Page.InvalidParameters", "The parameters must be a JSON object, e.g. {\"name\": \"Alice\"}");
  return value;
}

function parameterNames() {
  try {
    return Object.keys(parameters());
  } catch {
    return [];
  }
}

// ---- history -----------------------------------------------------------

function loadHistory() {
  try {
    const h = JSON.parse(localStorage.getItem(HISTORY_KEY) || "[]");
    return Array.isArray(h) ? h.filter((s) => typeof s === "string") : [];
  } catch {
    return [];
  }
}

function remember(statement) {
  history = history.filter((s) => s !== statement);
  history.push(statement);
  if (history.length > HISTORY_LIMIT) history = history.slice(-HISTORY_LIMIT);
  historyCursor = history.length;
  localStorage.setItem(HISTORY_KEY, JSON.stringify(history));
  renderHistory();
}

function walkHistory(step) {
  if (!history.length) return;
  historyCursor = Math.max(0, Math.min(history.length, historyCursor + step));
  editor.value = history[historyCursor] ?? "";
}

function renderHistory() {
  const box = $("side-history");
  box.replaceChildren();
  if (!history.length) box.innerHTML = '<p class="muted">Statements you run appear here.</p>';
  for (const statement of [...history].reverse()) {
    const b = document.createElement("button");
    b.className = "history-item";
    b.textContent = statement;
    b.title = "Load into the editor";
    b.addEventListener("click", () => {
      editor.value = statement;
      editor.focus();
    });
    box.append(b);
  }
}

for (const b of document.querySelectorAll("#side-tabs button")) {
  b.addEventListener("click", () => {
    for (const o of document.querySelectorAll("#side-tabs button")) o.classList.toggle("active", o === b);
    $("side-schema").hidden = b.dataset.side !== "schema";
    $("side-history").hidden = b.dataset.side !== "history";
  });
}

// ---- running -----------------------------------------------------------

function showError(e) {
  const box = $("error");
  box.replaceChildren();
  const code = document.createElement("strong");
  code.textContent = e.code || "Error";
  const msg = document.createElement("pre");
  msg.textContent = e.message;
  box.append(code, msg);
  box.hidden = false;
  editor.markError(e.position, e.message);
}

function clearError() {
  $("error").hidden = true;
  editor.markError(null);
}

let running = false;

async function run() {
  const statement = editor.value.trim();
  if (!statement || running) return;
  if (!api.authorization) {
    showError(new QueryError("Rhizome.Page.NotConnected", "Connect first: enter the user and password beside the editor."));
    $("login-password").focus();
    return;
  }
  clearError();
  let params;
  try {
    params = parameters();
  } catch (e) {
    showError(e);
    return;
  }
  remember(statement);
  running = true;
  $("run").disabled = true;
  $("summary").textContent = "running…";
  const started = performance.now();
  try {
    const result = await api.query(statement, params);
    lastResult = result;
    showResult(result, started);
    if (result.counters && countersText(result.counters)) refreshSchema();
  } catch (e) {
    $("summary").textContent = "";
    showError(e instanceof QueryError ? e : new QueryError("Rhizome.Page", String(e)));
  } finally {
    running = false;
    $("run").disabled = false;
    window.rhizome.runs++;
  }
}

// Views drawn for the current result; the others are drawn when shown.
let drawn = new Set();

function draw(name) {
  if (!lastResult || drawn.has(name)) return;
  drawn.add(name);
  if (name === "table") renderTable($("view-table"), lastResult);
  else if (name === "json") renderJson($("json"), lastResult);
  else if (name === "plan") renderPlan($("view-plan"), lastResult.plan, lastResult.profiled);
}

function showResult(result, started) {
  const counters = countersText(result.counters);
  drawn = new Set();
  if (result.plan) view = "plan";
  graphView.show(result, view === "graph");
  setView(view);
  const summary = `${result.rows.length} row${result.rows.length === 1 ? "" : "s"}${counters ? ", " + counters : ""}, ${result.elapsedMs.toFixed(0)} ms`;
  $("summary").textContent = summary;
  $("summary").dataset.rows = result.rows.length;
  window.rhizome.lastRunMs = performance.now() - started;
}

async function expand(node) {
  const numeric = /^(?:n:|\d+:[^:]*:)?(\d+)$/.exec(node.id);
  const statement = numeric
    ? "MATCH (n)-[r]-(m) WHERE id(n) = $id RETURN r, m LIMIT 300"
    : "MATCH (n)-[r]-(m) WHERE elementId(n) = $id RETURN r, m LIMIT 300";
  try {
    const result = await api.query(statement, { id: numeric ? Number(numeric[1]) : node.id });
    const added = graphView.merge(result.rows, node.id);
    $("summary").textContent = `expanded ${node.labels[0] || "node"} ${node.id}: ${added} new node${added === 1 ? "" : "s"}`;
  } catch (e) {
    showError(e instanceof QueryError ? e : new QueryError("Rhizome.Page", String(e)));
  }
}

function setView(name) {
  view = name;
  for (const b of document.querySelectorAll("#result-tabs button"))
    b.classList.toggle("active", b.dataset.view === name);
  for (const v of ["table", "json", "graph", "plan"]) $(`view-${v}`).hidden = v !== name;
  if (name === "graph") graphView.ensureRenderer();
  else draw(name);
}

for (const b of document.querySelectorAll("#result-tabs button")) b.addEventListener("click", () => setView(b.dataset.view));
$("run").addEventListener("click", () => run());
$("zoom-in").addEventListener("click", () => graphView.zoom(1.5));
$("zoom-out").addEventListener("click", () => graphView.zoom(1 / 1.5));
$("zoom-reset").addEventListener("click", () => graphView.zoom(0));

// ---- start -------------------------------------------------------------

window.rhizome = { api, editor, graphView, run, setView, runs: 0, lastRunMs: null, result: () => lastResult };
renderHistory();
const saved = JSON.parse(sessionStorage.getItem("rhizome.login") || "null");
if (saved && saved.authorization) {
  api.authorization = saved.authorization;
  api.user = saved.user;
  api.database = saved.database || "neo4j";
  api
    .query("RETURN 1")
    .then(loggedIn)
    .catch(() => {
      api.logout();
      sessionStorage.removeItem("rhizome.login");
    });
} else {
  $("login-password").focus();
}
