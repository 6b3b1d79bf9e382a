// Values of the Query API's answers, decoded into plain JavaScript: the
// typed JSON form (`Accept: application/vnd.neo4j.query`, every value an
// object `{"$type": …, "_value": …}`) and, as a fallback, the plain JSON
// form. Nodes, relationships and paths become small tagged objects.

/** A node: `{ kind: "node", id, labels, properties }`. */
export function node(id, labels, properties) {
  return { kind: "node", id: String(id), labels: labels || [], properties: properties || {} };
}

/** A relationship: `{ kind: "relationship", id, type, start, end, properties }`. */
export function relationship(id, type, start, end, properties) {
  return {
    kind: "relationship",
    id: String(id),
    type,
    start: String(start),
    end: String(end),
    properties: properties || {},
  };
}

/** A value printed as text that JSON cannot hold natively (temporal, point, bytes). */
function scalar(type, text) {
  return { kind: "scalar", type, text: String(text) };
}

function decodeMap(map) {
  const out = {};
  for (const key of Object.keys(map || {})) out[key] = decode(map[key]);
  return out;
}

// Entities already decoded in the answer being decoded, by element id: a
// node that comes back in many rows is decoded once and shared.
let seen = null;

/** Decodes the rows of one answer; an entity repeated across rows becomes one shared object. */
export function decodeRows(values) {
  seen = new Map();
  try {
    return values.map((row) => row.map(decode));
  } finally {
    seen = null;
  }
}

function remembered(id, make) {
  if (!seen) return make();
  let e = seen.get(id);
  if (!e) seen.set(id, (e = make()));
  return e;
}

/** Decodes one value of an answer (typed JSON, or plain JSON as a fallback). */
export function decode(v) {
  if (v === null || typeof v !== "object") return v;
  if (Array.isArray(v)) return v.map(decode);
  if (!("$type" in v)) return decodePlain(v);
  const x = v._value;
  switch (v.$type) {
    case "Null":
      return null;
    case "Boolean":
    case "String":
      return x;
    case "Integer": {
      const n = Number(x);
      return Number.isSafeInteger(n) ? n : BigInt(x);
    }
    case "Float":
      return typeof x === "number" ? x : Number(x);
    case "List":
      return x.map(decode);
    case "Map":
      return decodeMap(x);
    case "Node":
      return remembered(x._element_id, () => node(x._element_id, x._labels, decodeMap(x._properties)));
    case "Relationship":
      return remembered(x._element_id, () =>
        relationship(
          x._element_id,
          x._type,
          x._start_node_element_id,
          x._end_node_element_id,
          decodeMap(x._properties),
        ),
      );
    case "Path":
      return { kind: "path", elements: x.map(decode) };
    default:
      return scalar(v.$type, typeof x === "string" ? x : JSON.stringify(x));
  }
}

function decodePlain(v) {
  if ("elementId" in v && "labels" in v && "properties" in v)
    return node(v.elementId, v.labels, decodeMap(v.properties));
  if ("elementId" in v && "type" in v && "startNodeElementId" in v)
    return relationship(v.elementId, v.type, v.startNodeElementId, v.endNodeElementId, decodeMap(v.properties));
  return decodeMap(v);
}

/** The text a table cell shows for `v`. */
export function format(v) {
  if (v === null || v === undefined) return "null";
  if (typeof v === "string") return JSON.stringify(v);
  if (typeof v === "number" || typeof v === "boolean" || typeof v === "bigint") return String(v);
  if (Array.isArray(v)) return "[" + v.map(format).join(", ") + "]";
  switch (v.kind) {
    case "node":
      return "(" + v.labels.map((l) => ":" + l).join("") + formatProps(v.properties) + ")";
    case "relationship":
      return "[:" + v.type + formatProps(v.properties) + "]";
    case "path":
      return v.elements.map(format).join("-");
    case "scalar":
      return v.text;
    default:
      return "{" + Object.keys(v).map((k) => k + ": " + format(v[k])).join(", ") + "}";
  }
}

function formatProps(props) {
  const keys = Object.keys(props);
  if (!keys.length) return "";
  return " {" + keys.map((k) => k + ": " + format(props[k])).join(", ") + "}";
}

/** `v` as plain JSON (for the JSON view): entities keep their ids. */
export function toJson(v) {
  if (v === null || v === undefined) return null;
  if (typeof v === "bigint") return v.toString();
  if (typeof v !== "object") return v;
  if (Array.isArray(v)) return v.map(toJson);
  switch (v.kind) {
    case "node":
      return { elementId: v.id, labels: v.labels, properties: toJson(v.properties) };
    case "relationship":
      return {
        elementId: v.id,
        type: v.type,
        startNodeElementId: v.start,
        endNodeElementId: v.end,
        properties: toJson(v.properties),
      };
    case "path":
      return v.elements.map(toJson);
    case "scalar":
      return v.text;
    default: {
      const out = {};
      for (const k of Object.keys(v)) out[k] = toJson(v[k]);
      return out;
    }
  }
}

/** Calls `onNode` / `onRelationship` for every entity inside `v` (lists, maps and paths included). */
export function walkEntities(v, onNode, onRelationship) {
  if (v === null || typeof v !== "object") return;
  if (Array.isArray(v)) {
    for (const x of v) walkEntities(x, onNode, onRelationship);
    return;
  }
  switch (v.kind) {
    case "node":
      onNode(v);
      return;
    case "relationship":
      onRelationship(v);
      return;
    case "path":
      for (const x of v.elements) walkEntities(x, onNode, onRelationship);
      return;
    case "scalar":
      return;
    default:
      for (const k of Object.keys(v)) walkEntities(v[k], onNode, onRelationship);
  }
}
