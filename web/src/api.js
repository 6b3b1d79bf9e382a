// The client of Rhizome's HTTP Query API (`POST /db/{name}/query/v2`, the
// Neo4j Query API shape) with basic auth, typed JSON answers and plans.
import { decodeRows } from "./values.js";

/** A failed statement: the server's status code, message and, when known, position. */
export class QueryError extends Error {
  constructor(code, message, position) {
    super(message);
    this.code = code;
    this.position = position || positionOf(message);
  }
}

/**
 * The position a message names, as `{ line, column }` (1-based) or
 * `{ offset }` (0-based): Rhizome's `at 3:14`, Neo4j's
 * `(line 3, column 14 (offset: 40))`.
 */
export function positionOf(message) {
  if (!message) return null;
  let m = /line (\d+), column (\d+)/.exec(message);
  if (m) return { line: Number(m[1]), column: Number(m[2]) };
  m = /\bat (\d+):(\d+)/.exec(message);
  if (m) return { line: Number(m[1]), column: Number(m[2]) };
  m = /offset:? (\d+)/.exec(message);
  if (m) return { offset: Number(m[1]) };
  return null;
}

/** A connection to one database of one server. */
export class Api {
  constructor(base = "") {
    this.base = base;
    this.database = "neo4j";
    this.authorization = null;
    this.user = null;
  }

  /** Remembers the credentials and checks them with `RETURN 1`. */
  async login(user, password, database) {
    this.database = database || "neo4j";
    this.authorization = "Basic " + btoa(String.fromCharCode(...new TextEncoder().encode(user + ":" + password)));
    this.user = user;
    try {
      await this.query("RETURN 1 AS ok");
    } catch (e) {
      this.authorization = null;
      this.user = null;
      throw e;
    }
  }

  /** Forgets the credentials. */
  logout() {
    this.authorization = null;
    this.user = null;
  }

  /**
   * Runs one statement; answers `{ fields, rows, plan, profiled, counters,
   * notifications, elapsedMs, startedAt, receivedAt, bytes }` with the values
   * decoded (`receivedAt`: when the answer's last byte arrived).
   */
  async query(statement, parameters = {}) {
    const started = performance.now();
    const headers = { "Content-Type": "application/json", Accept: "application/vnd.neo4j.query" };
    if (this.authorization) headers.Authorization = this.authorization;
    let response;
    try {
      response = await fetch(`${this.base}/db/${encodeURIComponent(this.database)}/query/v2`, {
        method: "POST",
        headers,
        body: JSON.stringify({ statement, parameters }),
      });
    } catch (e) {
      throw new QueryError("Rhizome.Network", `the server did not answer: ${e.message}`);
    }
    const text = await response.text();
    const receivedAt = performance.now();
    let body;
    try {
      body = JSON.parse(text);
    } catch {
      throw new QueryError("Rhizome.Http", `HTTP ${response.status}: ${text.slice(0, 300) || response.statusText}`);
    }
    const errors = body.errors || [];
    if (errors.length) {
      const e = errors[0];
      throw new QueryError(e.code || `HTTP ${response.status}`, e.message || JSON.stringify(e), e.position);
    }
    if (!response.ok) throw new QueryError(`HTTP ${response.status}`, text.slice(0, 300));
    const data = body.data || { fields: [], values: [] };
    return {
      fields: data.fields || [],
      rows: decodeRows(data.values || []),
      plan: body.profiledQueryPlan || body.queryPlan || null,
      profiled: !!body.profiledQueryPlan,
      counters: body.counters || null,
      notifications: body.notifications || [],
      elapsedMs: performance.now() - started,
      startedAt: started,
      receivedAt,
      bytes: text.length,
    };
  }
}
