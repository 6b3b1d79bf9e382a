// The schema side panel (labels and relationship types with counts,
// property keys, indexes, constraints) and the lists completion needs.

const quote = (name) => "`" + String(name).replace(/`/g, "``") + "`";

async function column(api, statement) {
  try {
    const r = await api.query(statement);
    return r.rows.map((row) => row[0]);
  } catch {
    return null;
  }
}

async function rows(api, statement) {
  try {
    return await api.query(statement);
  } catch (e) {
    return { error: e };
  }
}

/** Reads the schema; answers `{ labels, types, keys, procedures, functions, counts, indexes, constraints }`. */
export async function loadSchema(api) {
  const [labels, types, keys] = await Promise.all([
    column(api, "CALL db.labels() YIELD label RETURN label"),
    column(api, "CALL db.relationshipTypes() YIELD relationshipType RETURN relationshipType"),
    column(api, "CALL db.propertyKeys() YIELD propertyKey RETURN propertyKey"),
  ]);
  // Rhizome answers dbms.procedures() / dbms.functions(); Neo4j 5 only the SHOW forms.
  const listed = async (call, show) => {
    const r = await rows(api, call);
    return (r.error ? (await rows(api, show)).rows : r.rows) || [];
  };
  const procedures = await listed(
    "CALL dbms.procedures() YIELD name, signature RETURN name, signature",
    "SHOW PROCEDURES YIELD name, signature RETURN name, signature",
  );
  const functions = await listed(
    "CALL dbms.functions() YIELD name, signature RETURN name, signature",
    "SHOW FUNCTIONS YIELD name, signature RETURN name, signature",
  );
  const counted = async (list, pattern) =>
    Promise.all((list || []).slice(0, 60).map(async (name) => [name, (await column(api, pattern(quote(name))))?.[0]]));
  const [labelCounts, typeCounts, totals, indexes, constraints] = await Promise.all([
    counted(labels, (l) => `MATCH (n:${l}) RETURN count(n)`),
    counted(types, (t) => `MATCH ()-[r:${t}]->() RETURN count(r)`),
    Promise.all([column(api, "MATCH (n) RETURN count(n)"), column(api, "MATCH ()-[r]->() RETURN count(r)")]),
    rows(api, "SHOW INDEXES"),
    rows(api, "SHOW CONSTRAINTS"),
  ]);
  return {
    labels: labels || [],
    types: types || [],
    keys: keys || [],
    procedures: procedures.filter(([n]) => typeof n === "string").map(([name, signature]) => ({ name, signature: signature || `${name}()`, returnItems: [] })),
    functions: functions.filter(([n]) => typeof n === "string").map(([name, signature]) => ({ name, signature: signature || `${name}()` })),
    labelCounts: new Map(labelCounts),
    typeCounts: new Map(typeCounts),
    nodeCount: totals[0]?.[0],
    relCount: totals[1]?.[0],
    indexes,
    constraints,
  };
}

/** The part of the schema the editor's completion takes. */
export function editorSchema(schema, parameters) {
  return {
    labels: schema.labels.map((l) => ":" + l),
    relationshipTypes: schema.types.map((t) => ":" + t),
    propertyKeys: schema.keys,
    procedures: schema.procedures,
    functions: schema.functions,
    parameters,
    consoleCommands: [],
  };
}

/** Draws the panel; `onPick(statement)` runs a statement for a clicked label, type or key. */
export function renderSchema(element, schema, onPick) {
  element.replaceChildren();
  const section = (title, testid) => {
    const h = document.createElement("h3");
    h.textContent = title;
    const div = document.createElement("div");
    div.className = "chips";
    div.dataset.testid = testid;
    element.append(h, div);
    return div;
  };
  const chip = (parent, text, count, cls, statement) => {
    const b = document.createElement("button");
    b.className = "chip " + cls;
    b.textContent = count === undefined || count === null ? text : `${text} (${count})`;
    b.title = statement;
    b.addEventListener("click", () => onPick(statement));
    parent.append(b);
  };
  const totals = document.createElement("p");
  totals.className = "muted";
  totals.textContent = `${schema.nodeCount ?? "?"} nodes, ${schema.relCount ?? "?"} relationships`;
  element.append(totals);
  const labels = section("Node labels", "schema-labels");
  chip(labels, "*", schema.nodeCount, "label", "MATCH (n) RETURN n LIMIT 25");
  for (const l of schema.labels) chip(labels, l, schema.labelCounts.get(l), "label", `MATCH (n:${quote(l)}) RETURN n LIMIT 25`);
  const types = section("Relationship types", "schema-types");
  chip(types, "*", schema.relCount, "type", "MATCH p=()-[r]->() RETURN p LIMIT 25");
  for (const t of schema.types)
    chip(types, t, schema.typeCounts.get(t), "type", `MATCH p=()-[r:${quote(t)}]->() RETURN p LIMIT 25`);
  const keys = section("Property keys", "schema-keys");
  for (const k of schema.keys)
    chip(keys, k, undefined, "key", `MATCH (n) WHERE n.${quote(k)} IS NOT NULL RETURN DISTINCT labels(n), n.${quote(k)} LIMIT 25`);
  list(section("Indexes", "schema-indexes"), schema.indexes, ["name", "type", "labelsOrTypes", "properties", "state"]);
  list(section("Constraints", "schema-constraints"), schema.constraints, ["name", "type", "labelsOrTypes", "properties"]);
  const procs = section("Procedures", "schema-procedures");
  procs.classList.add("procedures");
  for (const p of schema.procedures) {
    const s = document.createElement("div");
    s.className = "procedure";
    s.textContent = p.signature;
    procs.append(s);
  }
}

function list(parent, result, wanted) {
  if (!result || result.error) {
    parent.textContent = result?.error ? `unavailable: ${result.error.message}` : "";
    return;
  }
  if (!result.rows.length) {
    parent.textContent = "none";
    parent.classList.add("muted");
    return;
  }
  const idx = wanted.map((w) => result.fields.indexOf(w)).filter((i) => i >= 0);
  for (const row of result.rows) {
    const d = document.createElement("div");
    d.className = "schema-row";
    d.textContent = idx.map((i) => (Array.isArray(row[i]) ? row[i].join(",") : row[i])).join(" · ");
    parent.append(d);
  }
}
