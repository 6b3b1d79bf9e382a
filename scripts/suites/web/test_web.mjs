// Browser tests of the Rhizome page: playwright-core drives Debian's
// Chromium (headless, software rendering) against `rhizome serve --http`
// started by scripts/suites/60-web.sh. Every step writes a screenshot to
// $ARTIFACTS; expected values come from the Query API directly, not from
// the page. Exits non-zero on the first failed step.
//
// Environment: RHIZOME_URL (the demo graph), RHIZOME_PERF_URL (10,000
// nodes / 50,000 relationships), RHIZOME_PASSWORD, CHROMIUM, ARTIFACTS.
import { chromium } from "playwright-core";
import { mkdirSync, writeFileSync } from "node:fs";
import assert from "node:assert/strict";

const url = process.env.RHIZOME_URL;
const perfUrl = process.env.RHIZOME_PERF_URL;
const password = process.env.RHIZOME_PASSWORD;
const artifacts = process.env.ARTIFACTS || "target/web-artifacts";
const FIRST_FRAME_LIMIT_MS = 5000;
const PAN_FRAME_LIMIT_MS = 100;
// RHIZOME_WEB_PERF_REPORT_ONLY=1 records the performance figures without
// failing on them; 60-web.sh sets it while the pan frame-time target is not
// met (issue 24), and prints every figure over its limit as TARGET NOT MET.
const perfAssert = process.env.RHIZOME_WEB_PERF_REPORT_ONLY === "1" ? (ok, msg) => ok || console.log("     TARGET NOT MET: " + msg) : assert.ok;
mkdirSync(artifacts, { recursive: true });

/** Runs a statement through the Query API itself (the oracle the page is checked against). */
async function direct(base, statement, parameters = {}) {
  const res = await fetch(`${base}/db/neo4j/query/v2`, {
    method: "POST",
    headers: {
      "Content-Type": "application/json",
      Accept: "application/json",
      Authorization: "Basic " + Buffer.from(`neo4j:${password}`).toString("base64"),
    },
    body: JSON.stringify({ statement, parameters }),
  });
  const body = await res.json();
  if (body.errors?.length) throw new Error(`${statement}: ${JSON.stringify(body.errors)}`);
  return body.data.values;
}

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  headless: true,
  args: ["--no-sandbox", "--use-angle=swiftshader", "--enable-unsafe-swiftshader", "--ignore-gpu-blocklist"],
});
const metrics = {};
let page;
let stepNo = 0;
const pageErrors = [];

async function step(name, fn) {
  stepNo++;
  const file = `${artifacts}/${String(stepNo).padStart(2, "0")}-${name}.png`;
  const started = Date.now();
  try {
    await fn();
    await page.screenshot({ path: file });
    console.log(`ok   ${stepNo} ${name} (${Date.now() - started} ms)`);
  } catch (e) {
    await page.screenshot({ path: file.replace(".png", "-FAILED.png") }).catch(() => {});
    console.log(`FAIL ${stepNo} ${name}: ${e.stack || e}`);
    if (pageErrors.length) console.log("page errors:\n" + pageErrors.join("\n"));
    await browser.close();
    process.exit(1);
  }
}

async function newPage(base) {
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  const p = await context.newPage();
  p.on("pageerror", (e) => pageErrors.push(String(e)));
  // Refused logins and failed statements are answered 4xx on purpose; any other console error counts.
  p.on("console", (m) => m.type() === "error" && !/Failed to load resource: .* (400|401)/.test(m.text()) && pageErrors.push(m.text()));
  await p.goto(base + "/", { timeout: 120000 });
  return p;
}

async function typeStatement(statement) {
  await page.evaluate((s) => (window.rhizome.editor.value = s), statement);
}

async function runStatement(statement) {
  const before = await page.evaluate(() => window.rhizome.runs);
  await typeStatement(statement);
  await page.click("[data-testid=run]");
  await page.waitForFunction((n) => window.rhizome.runs > n, before, { timeout: 60000 });
}

// Where node `id` is on the page, for a click. The layout decides where a
// node lands, and the layout runs for a time budget, so on a slower or
// busier machine a node may come to rest under something drawn over the
// graph (the inspector, the legend, the layout buttons). Then the camera
// first centres on the node, so the click reaches the graph as a user's
// would after panning there.
async function nodeViewport(id) {
  const locate = () =>
    page.evaluate((id) => {
      const g = window.rhizome.graphView;
      const p = g.renderer.graphToViewport(g.graph.getNodeAttributes(id));
      const box = document.querySelector("[data-testid=graph]").getBoundingClientRect();
      const at = { x: p.x + box.left, y: p.y + box.top };
      const hit = document.elementFromPoint(at.x, at.y);
      at.onGraph = hit instanceof HTMLCanvasElement && document.querySelector("[data-testid=graph]").contains(hit);
      return at;
    }, id);
  const at = await locate();
  if (at.onGraph) return at;
  await page.evaluate((id) => {
    const g = window.rhizome.graphView;
    const d = g.renderer.getNodeDisplayData(id);
    g.renderer.getCamera().setState({ x: d.x, y: d.y });
  }, id);
  await page.waitForTimeout(300);
  const centred = await locate();
  assert.ok(centred.onGraph, `node ${id} is on the graph, not under an overlay, once centred`);
  return centred;
}

// Pans with real mouse events (playwright's mouse: down on the graph's
// background, 40 moves 25 ms apart, up) and records the intervals between
// animation frames meanwhile: every frame the browser shows while the
// picture follows the mouse, including the first, which waits for
// whatever the page was busy with when the button went down.
async function pan(label, { settle }) {
  if (settle) {
    // Start from a quiet page: the frame that draws the relationships
    // back after the layout stops belongs to the layout, not to panning.
    await page.waitForFunction(() => performance.now() - window.rhizome.graphView.metrics.lastRenderAt > 500, null, {
      timeout: 60000,
      polling: 100,
    });
  }
  // Press on the background, not on a node (which would drag the node):
  // the free 8-pixel cells nearest the middle, found from the nodes' screen
  // positions, then confirmed by the page's own test (sigma's picking
  // layer, which the page asks on mousedown): a cell the estimate thinks
  // free but the picking layer covers is skipped and counted. The press
  // itself is confirmed too: if the page did not start moving the picture
  // (the picking layer saw a node under the pointer after all), the button
  // goes up unmoved and the next cell is tried, and that is counted.
  const found = await page.evaluate(() => {
    const g = window.rhizome.graphView;
    const box = document.querySelector("[data-testid=graph]").getBoundingClientRect();
    const cell = 8;
    const taken = new Set();
    g.graph.forEachNode((id) => {
      const d = g.renderer.getNodeDisplayData(id);
      if (!d) return;
      const p = g.renderer.framedGraphToViewport(d);
      const cx = Math.floor(p.x / cell);
      const cy = Math.floor(p.y / cell);
      for (let dx = -1; dx <= 1; dx++) for (let dy = -1; dy <= 1; dy++) taken.add(`${cx + dx},${cy + dy}`);
    });
    const free = [];
    for (let y = 200; y < box.height - 40; y += cell)
      for (let x = 300; x < box.width - 40; x += cell) {
        if (taken.has(`${Math.floor(x / cell)},${Math.floor(y / cell)}`)) continue;
        free.push({ far: Math.hypot(x - box.width / 2, y - box.height / 2), x: x + cell / 2, y: y + cell / 2 });
      }
    free.sort((p, q) => p.far - q.far);
    let coveredByPicking = 0;
    const spots = [];
    for (const c of free.slice(0, 64)) {
      if (g.renderer.getNodeAtPosition({ x: c.x, y: c.y })) coveredByPicking++;
      else spots.push({ x: box.left + c.x, y: box.top + c.y });
    }
    return { spots, coveredByPicking };
  });
  assert.ok(found.spots.length > 0, "a spot of background to press on");
  let start = null;
  let before = null;
  let pressesOnNodes = 0;
  for (const spot of found.spots.slice(0, 8)) {
    before = await page.evaluate((spot) => {
      const g = window.rhizome.graphView;
      const box = document.querySelector("[data-testid=graph]").getBoundingClientRect();
      const pressed = g.renderer.viewportToGraph({ x: spot.x - box.left, y: spot.y - box.top });
      window.__frames = [];
      let last = performance.now();
      window.__recording = true;
      const tick = (t) => {
        window.__frames.push(t - last);
        last = t;
        if (window.__recording) requestAnimationFrame(tick);
      };
      requestAnimationFrame(tick);
      return { camera: g.renderer.getCamera().getState(), renders: g.metrics.frames, pressed };
    }, spot);
    await page.mouse.move(spot.x, spot.y);
    await page.mouse.down();
    if (await page.evaluate(() => window.rhizome.graphView.picturePanning())) {
      start = spot;
      break;
    }
    pressesOnNodes++;
    await page.evaluate(() => (window.__recording = false));
    await page.mouse.up();
    await page.waitForTimeout(300);
  }
  assert.ok(start, `a press on the background starts a pan (${pressesOnNodes} presses landed on nodes)`);
  start.coveredByPicking = found.coveredByPicking;
  start.pressesOnNodes = pressesOnNodes;
  const moves = 40;
  const started = Date.now();
  let x = start.x;
  let y = start.y;
  for (let i = 1; i <= moves; i++) {
    x = start.x - Math.sin(i / 6) * 250;
    y = start.y - 150 + Math.cos(i / 6) * 150;
    await page.mouse.move(x, y);
    await page.waitForTimeout(25);
  }
  const dragged = await page.evaluate(() => {
    window.__recording = false;
    return { frames: window.__frames.slice(1), renders: window.rhizome.graphView.metrics.frames };
  });
  const dragMs = Date.now() - started;
  await page.mouse.up();
  // The camera took the whole drag: the graph point under the pointer at
  // the press is under it at the release.
  const moved = await page.evaluate(
    ({ x, y }) => {
      const g = window.rhizome.graphView;
      const box = document.querySelector("[data-testid=graph]").getBoundingClientRect();
      return new Promise((resolve) =>
        requestAnimationFrame(() => {
          const released = g.renderer.viewportToGraph({ x: x - box.left, y: y - box.top });
          resolve({ camera: g.renderer.getCamera().getState(), released });
        }),
      );
    },
    { x, y },
  );
  await page.waitForTimeout(300);
  const frames = [...dragged.frames].sort((p, q) => p - q);
  const p = (q) => Math.round(frames[Math.min(frames.length - 1, Math.floor(q * frames.length))]);
  metrics[label] = {
    frames: frames.length,
    medianMs: p(0.5),
    p95Ms: p(0.95),
    maxMs: Math.round(frames[frames.length - 1]),
    moves,
    dragMs,
    rendererFramesDuringDrag: dragged.renders - before.renders,
    pressCellsCoveredByPicking: start.coveredByPicking,
    pressesOnNodes: start.pressesOnNodes,
  };
  console.log(`     ${label} ${JSON.stringify(metrics[label])}`);
  // On a big graph a slow machine can turn the pan into something else
  // (see docs/web.md): checked with the performance figures.
  perfAssert(
    moved.camera.x !== before.camera.x || moved.camera.y !== before.camera.y,
    `the camera moved: ${JSON.stringify([before.camera, moved.camera])}`,
  );
  // (Checked on a still graph: a running layout rescales the graph's frame.)
  if (!settle) return metrics[label];
  const drift = Math.hypot(moved.released.x - before.pressed.x, moved.released.y - before.pressed.y);
  const span = Math.hypot(x - start.x, y - start.y);
  const unit = await page.evaluate(() => {
    const r = window.rhizome.graphView.renderer;
    const o = r.viewportToGraph({ x: 0, y: 0 });
    const e = r.viewportToGraph({ x: 1, y: 0 });
    return Math.hypot(e.x - o.x, e.y - o.y);
  });
  perfAssert(drift <= unit * Math.max(3, span / 20), `the point pressed is under the pointer at the release (off by ${(drift / unit).toFixed(1)} px of a ${span.toFixed(0)} px drag)`);
  return metrics[label];
}

// ---------------------------------------------------------------------------
page = await newPage(url);

await step("login-prompt-beside-the-editor", async () => {
  await page.waitForSelector("[data-testid=editor] .cm-content");
  assert.ok(await page.isVisible("[data-testid=login]"), "login prompt visible on first load");
  const editor = await page.locator("[data-testid=editor]").boundingBox();
  const login = await page.locator("[data-testid=login]").boundingBox();
  assert.ok(login.x > editor.x + editor.width - 1, "the login prompt sits to the right of the editor");
});

await step("wrong-password-refused", async () => {
  await page.fill("#login-password", "not-the-password");
  await page.click("#login-submit");
  await page.waitForFunction(() => document.querySelector("#login-error").textContent.length > 0);
  const text = await page.textContent("#login-error");
  assert.match(text, /Unauthorized|Security|authentication|credentials/i, text);
  assert.ok(await page.isVisible("[data-testid=login]"));
});

await step("log-in", async () => {
  await page.fill("#login-password", password);
  await page.click("#login-submit");
  await page.waitForSelector("[data-testid=login]", { state: "hidden" });
  assert.equal(await page.textContent("[data-testid=whoami]"), "neo4j @ neo4j");
  await page.waitForSelector("[data-testid=schema-labels] button");
  const labels = await page.locator("[data-testid=schema-labels] button").allTextContents();
  const expected = await direct(url, "MATCH (n:Person) RETURN count(n)");
  assert.ok(labels.includes(`Person (${expected[0][0]})`), `schema shows Person with its count: ${labels}`);
  const types = await page.locator("[data-testid=schema-types] button").allTextContents();
  assert.ok(types.some((t) => t.startsWith("ACTED_IN (")), `schema shows ACTED_IN: ${types}`);
  assert.ok((await page.locator("[data-testid=schema-procedures] .procedure").count()) >= 3, "procedures listed");
});

await step("completion-from-the-database", async () => {
  await typeStatement("");
  await page.click("[data-testid=editor] .cm-content");
  await page.keyboard.type("MATCH (n:Pers");
  await page.waitForSelector(".cm-tooltip-autocomplete li", { timeout: 10000 });
  const options = await page.locator(".cm-tooltip-autocomplete li").allTextContents();
  assert.ok(options.some((o) => o.includes("Person")), `completion offers :Person: ${options}`);
  await page.keyboard.press("Escape");
});

const tableQuery = "MATCH (p:Person) RETURN p.name AS name, p.born AS born ORDER BY name LIMIT 7";
await step("query-and-read-the-table", async () => {
  await runStatement(tableQuery);
  const expected = await direct(url, tableQuery);
  const headers = await page.locator("[data-testid=table] th").allTextContents();
  assert.deepEqual(headers, ["name", "born"]);
  const cells = await page.locator("[data-testid=table] tbody tr").evaluateAll((trs) =>
    trs.map((tr) => [...tr.cells].map((c) => c.textContent)),
  );
  assert.equal(cells.length, expected.length);
  cells.forEach((row, i) => {
    assert.equal(row[0], JSON.stringify(expected[i][0]));
    assert.equal(row[1], expected[i][1] === null ? "null" : String(expected[i][1]));
  });
  assert.match(await page.textContent("[data-testid=summary]"), new RegExp(`^${expected.length} rows`));
});

await step("json-view", async () => {
  await page.click("[data-testid=tab-json]");
  const rows = JSON.parse(await page.textContent("[data-testid=json]"));
  const expected = await direct(url, tableQuery);
  assert.deepEqual(rows.map((r) => r.name), expected.map((r) => r[0]));
});

const graphQuery = "MATCH (p:Person)-[r:ACTED_IN]->(m:Movie) WHERE m.title STARTS WITH 'The' RETURN p, r, m";
let graphNodes;
await step("graph-view-node-count", async () => {
  await page.click("[data-testid=tab-graph]");
  await runStatement(graphQuery);
  const expected = await direct(
    url,
    "MATCH (p:Person)-[r:ACTED_IN]->(m:Movie) WHERE m.title STARTS WITH 'The' " +
      "WITH collect(DISTINCT p) + collect(DISTINCT m) AS ns, count(r) AS rels RETURN size(ns), rels",
  );
  graphNodes = expected[0][0];
  assert.ok(graphNodes > 3, "the graph query finds nodes");
  await page.waitForFunction(() => window.rhizome.graphView.metrics.firstFrameMs !== null);
  const stats = await page.locator("[data-testid=graph-stats]");
  assert.equal(Number(await stats.getAttribute("data-nodes")), graphNodes);
  assert.equal(Number(await stats.getAttribute("data-relationships")), expected[0][1]);
  assert.equal(await page.evaluate(() => window.rhizome.graphView.renderedNodeCount()), graphNodes);
  const legend = await page.locator("[data-testid=legend] .chip").allTextContents();
  assert.ok(legend.some((l) => l.startsWith("Person")) && legend.some((l) => l.startsWith("Movie")), `legend: ${legend}`);
  // The canvas really holds drawn pixels of more than one colour.
  await page.waitForTimeout(1500);
  const png = await page.locator("[data-testid=graph]").screenshot();
  assert.ok(png.length > 8000, "the graph canvas is not blank");
});

let movieId;
await step("click-shows-properties", async () => {
  await page.evaluate(() => window.rhizome.graphView.stopLayout()); // so the node stays put
  await page.waitForTimeout(300);
  movieId = await page.evaluate(() => {
    const g = window.rhizome.graphView;
    return [...g.entities.values()].find((e) => e.kind === "node" && e.labels.includes("Movie")).id;
  });
  const at = await nodeViewport(movieId);
  await page.mouse.click(at.x, at.y);
  await page.waitForSelector("[data-testid=inspector]:not([hidden])");
  assert.equal(await page.getAttribute("[data-testid=inspector]", "data-entity"), movieId);
  assert.match(await page.textContent("[data-testid=inspector]"), /title/);
});

await step("double-click-expands-neighbours", async () => {
  const numeric = Number(movieId.split(":").pop());
  const expected = await direct(
    url,
    "MATCH (p:Person)-[r:ACTED_IN]->(m:Movie) WHERE m.title STARTS WITH 'The' " +
      "WITH collect(DISTINCT p) + collect(DISTINCT m) AS shown " +
      "MATCH (x)--(y) WHERE id(x) = $id " +
      "WITH shown, collect(DISTINCT y) AS around RETURN size([y IN around WHERE NOT y IN shown])",
    { id: numeric },
  );
  await page.evaluate(() => window.rhizome.graphView.stopLayout());
  await page.waitForTimeout(300);
  // The page asks the server for the node's neighbours on a double-click.
  // Sigma recognises a double-click by two clicks within 300 ms of the
  // page's own clock, which a busy main thread on a loaded machine can
  // stretch: a double-click that sent no request is tried once more (and
  // counted); a request that was sent must be answered in time.
  const isExpansion = (r) => r.url().endsWith("/query/v2") && r.method() === "POST" && (r.postData() || "").includes("RETURN r, m LIMIT 300");
  let missedDoubleClicks = 0;
  let request = null;
  for (let attempt = 0; attempt < 2 && !request; attempt++) {
    const at = await nodeViewport(movieId);
    const sent = page.waitForRequest(isExpansion, { timeout: 5000 }).catch(() => null);
    await page.mouse.dblclick(at.x, at.y);
    request = await sent;
    if (!request) missedDoubleClicks++;
  }
  assert.ok(request, `a double-click on the node asks for its neighbours (${missedDoubleClicks} double-clicks sent no request)`);
  const asked = Date.now();
  const response = await request.response();
  const answeredMs = Date.now() - asked;
  assert.ok(response && response.ok(), `the expansion request is answered: ${response && response.status()}`);
  console.log(`     expansion answered in ${answeredMs} ms after the request was seen; missed double-clicks: ${missedDoubleClicks}`);
  await page.waitForFunction((n) => Number(document.querySelector("[data-testid=graph-stats]").dataset.nodes) !== n, graphNodes, {
    timeout: 10000,
  });
  const nodes = Number(await page.getAttribute("[data-testid=graph-stats]", "data-nodes"));
  assert.equal(nodes, graphNodes + expected[0][0], "expanding adds exactly the unseen neighbours");
  assert.ok(expected[0][0] > 0, "the expanded node had unseen neighbours");
  assert.equal(await page.evaluate(() => window.rhizome.graphView.renderedNodeCount()), nodes);
  await page.waitForTimeout(1000);
});

await step("pan-small-graph", async () => {
  // The same pan over the small graph: the browser's own cost of a frame
  // on this machine, to read the big graph's figures against.
  await page.evaluate(() => window.rhizome.graphView.stopLayout());
  const m = await pan("panSmallGraph", { settle: true });
  assert.equal(m.rendererFramesDuringDrag, 0, "no renderer frame while the background is dragged");
});

await step("profile-operator-tree", async () => {
  await runStatement(
    "PROFILE MATCH (p:Person)-[:ACTED_IN]->(m:Movie) WHERE m.released > 1990 RETURN p.name, count(*) AS movies ORDER BY movies DESC LIMIT 5",
  );
  await page.waitForSelector("[data-testid=plan] .operator");
  assert.ok(await page.isVisible("[data-testid=plan]"), "the plan view opens for PROFILE");
  const ops = await page.locator("[data-testid=plan] .operator").evaluateAll((els) =>
    els.map((e) => ({ name: e.dataset.operator, stats: e.querySelector(".op-stats").textContent, bar: !!e.querySelector(".op-bar span") })),
  );
  assert.ok(ops.length >= 4, `operators: ${JSON.stringify(ops)}`);
  const names = ops.map((o) => o.name);
  assert.ok(names.some((n) => /Scan/.test(n)), `a scan operator: ${names}`);
  assert.ok(names.some((n) => /Expand/.test(n)), `an expand operator: ${names}`);
  for (const o of ops) {
    assert.match(o.stats, /rows [\d,]+ · [\d.,]+ ms · workers \d+/, o.stats);
    assert.ok(o.bar, "each operator has a time bar");
  }
  assert.ok(ops.some((o) => /rows [1-9]/.test(o.stats)), "some operator produced rows");
});

await step("syntax-error-marked-in-the-editor", async () => {
  await runStatement("MATCH (n:Person)\nWHERE n.born > 1960\nRETRUN n.name");
  await page.waitForSelector("[data-testid=error]:not([hidden])");
  assert.match(await page.textContent("[data-testid=error]"), /SyntaxError/);
  const marker = page.locator(".cm-server-error");
  await marker.waitFor();
  assert.equal(await marker.textContent(), "RETRUN", "the marker sits on the offending word");
  const line = await page.locator(".cm-server-error-line").textContent();
  assert.equal(line, "RETRUN n.name", "the marked line is the third");
});

await step("history-and-parameters", async () => {
  await page.click("#side-tabs button[data-side=history]");
  const items = await page.locator("[data-testid=history] .history-item").allTextContents();
  assert.ok(items.includes(tableQuery), "history holds the statements run");
  await page.click("#toggle-params");
  await page.fill("[data-testid=params]", '{"name": "Keanu Reeves"}');
  await page.locator("[data-testid=params]").dispatchEvent("change");
  await page.click("[data-testid=tab-table]");
  await runStatement("MATCH (p:Person {name: $name}) RETURN p.name AS name");
  const expected = await direct(url, "MATCH (p:Person {name: $name}) RETURN p.name AS name", { name: "Keanu Reeves" });
  const cells = await page.locator("[data-testid=table] tbody td").allTextContents();
  assert.deepEqual(cells, expected.map((r) => JSON.stringify(r[0])));
  await page.click("#side-tabs button[data-side=schema]");
});

// ---------------------------------------------------------------------------
if (perfUrl) {
  page = await newPage(perfUrl);
  await step("perf-load-10k-nodes-50k-relationships", async () => {
    await page.fill("#login-password", password);
    await page.click("#login-submit");
    await page.waitForSelector("[data-testid=login]", { state: "hidden" });
    await page.click("[data-testid=tab-graph]");
    // Every node once, each with its outgoing relationships: 10,000 rows.
    await typeStatement("MATCH (n) OPTIONAL MATCH (n)-[r]->() RETURN n, collect(r) AS rels");
    const clicked = await page.evaluate(() => {
      window.__clicked = performance.now();
      document.querySelector("[data-testid=run]").click();
      return window.__clicked;
    });
    await page.waitForFunction(() => window.rhizome.graphView.metrics.firstFrameMs !== null, null, { timeout: 120000 });
    const m = await page.evaluate(() => ({
      receivedAt: window.rhizome.result().receivedAt,
      bytes: window.rhizome.result().bytes,
      firstFrameAt: window.rhizome.graphView.metrics.firstFrameAt,
      nodes: window.rhizome.graphView.graph.order,
      rels: window.rhizome.graphView.graph.size,
      rendered: window.rhizome.graphView.renderedNodeCount(),
    }));
    Object.assign(metrics, {
      nodes: m.nodes,
      relationships: m.rels,
      answerBytes: m.bytes,
      serverAndTransferMs: Math.round(m.receivedAt - clicked),
      answerToFirstFrameMs: Math.round(m.firstFrameAt - m.receivedAt),
      clickToFirstFrameMs: Math.round(m.firstFrameAt - clicked),
      serverBuild: process.env.RHIZOME_SERVER_BUILD || "debug",
    });
    console.log("     " + JSON.stringify(metrics));
    assert.equal(m.nodes, 10000);
    assert.equal(m.rels, 50000);
    assert.equal(m.rendered, 10000);
    // The page's own share (parse, decode, build, first frame) always has
    // to fit; the whole click-to-frame time only with a release server (a
    // debug server spends most of it serializing the answer).
    perfAssert(
      metrics.answerToFirstFrameMs <= FIRST_FRAME_LIMIT_MS,
      `first frame ${metrics.answerToFirstFrameMs} ms after the answer arrived (limit ${FIRST_FRAME_LIMIT_MS})`,
    );
    if (metrics.serverBuild === "release")
      perfAssert(
        metrics.clickToFirstFrameMs <= FIRST_FRAME_LIMIT_MS,
        `first frame ${metrics.clickToFirstFrameMs} ms after the click (limit ${FIRST_FRAME_LIMIT_MS})`,
      );
  });

  await step("perf-pan-during-layout", async () => {
    // On a slow machine the layout may have used up its time already: run it again.
    const restarted = await page.evaluate(() => {
      const g = window.rhizome.graphView;
      if (g.layoutRunning()) return false;
      g.startLayout(20000);
      return true;
    });
    if (restarted) await page.waitForTimeout(1000);
    const m = await pan("panDuringLayout", { settle: false });
    m.layoutRestarted = restarted;
    m.layoutRunningAfter = await page.evaluate(() => window.rhizome.graphView.layoutRunning());
    perfAssert(m.p95Ms <= PAN_FRAME_LIMIT_MS, `p95 frame ${m.p95Ms} ms while panning during layout: ${JSON.stringify(m)}`);
  });

  await step("perf-pan-after-layout", async () => {
    await page.evaluate(() => window.rhizome.graphView.stopLayout());
    await page.waitForTimeout(300);
    const m = await pan("panAfterLayout", { settle: true });
    // Dragging moves the drawn picture: sigma redraws nothing until the
    // release (on the big graph a performance figure; the small graph's
    // pan above checks it always).
    perfAssert(m.rendererFramesDuringDrag === 0, `no renderer frame while the background is dragged: ${JSON.stringify(m)}`);
    perfAssert(m.p95Ms <= PAN_FRAME_LIMIT_MS, `p95 frame ${m.p95Ms} ms while panning: ${JSON.stringify(m)}`);
  });
}

console.log("metrics " + JSON.stringify(metrics));
writeFileSync(`${artifacts}/metrics.json`, JSON.stringify(metrics, null, 2) + "\n");
if (pageErrors.length) {
  console.log("page errors:\n" + pageErrors.join("\n"));
  await browser.close();
  process.exit(1);
}
await browser.close();
