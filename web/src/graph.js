// The graph view: graphology holds the nodes and relationships of a
// result, sigma.js draws them with WebGL, and ForceAtlas2 lays them out in
// a web worker so the page stays responsive while it runs. Colours follow
// the first label, captions a name-like property; click shows properties,
// drag moves a node, double-click expands its neighbours.
import Graph from "graphology";
import Sigma from "sigma";
import forceAtlas2 from "graphology-layout-forceatlas2";
import FA2Layout from "graphology-layout-forceatlas2/worker";
import { assignLayoutChanges } from "graphology-layout-forceatlas2/helpers.js";
import { format, walkEntities } from "./values.js";

const PALETTE = [
  "#4c8eda", "#f79767", "#57c7e3", "#f16667", "#d9c8ae", "#8dcc93",
  "#ecb5c9", "#ffc454", "#da7194", "#569480", "#c990c0", "#848484",
];
const CAPTION_KEYS = ["name", "title", "caption", "label", "displayName", "id", "code"];
/** Above this many relationships, edges are hidden while the camera moves and edge events are off. */
const BIG_GRAPH_EDGES = 5000;
/** Above this many nodes, the layout's positions reach the graph (and the renderer) at most every LAYOUT_UPDATE_MS. */
const BIG_LAYOUT_NODES = 2000;
const LAYOUT_UPDATE_MS = 250;

/**
 * Makes a ForceAtlas2 worker supervisor copy the worker's positions into the
 * graph at most every `ms` milliseconds instead of after every iteration:
 * each copy makes sigma reprocess and redraw the whole graph, which for a
 * big graph under software rendering takes longer than an iteration, so
 * copying every one would keep the page busy redrawing. The worker keeps
 * iterating in between; skipped positions are superseded by later ones.
 */
function throttleLayoutUpdates(layout, ms) {
  let appliedAt = -Infinity;
  layout.worker.removeEventListener("message", layout.handleMessage);
  // The supervisor listens with `handleMessage` on every worker it spawns.
  layout.handleMessage = (event) => {
    if (!layout.running) return;
    const matrix = new Float32Array(event.data.nodes);
    const now = performance.now();
    if (now - appliedAt >= ms) {
      assignLayoutChanges(layout.graph, matrix, null);
      appliedAt = now;
    }
    layout.matrices.nodes = matrix;
    layout.askForIterations();
  };
  layout.worker.addEventListener("message", layout.handleMessage);
}

/** The caption of a node: a name-like property, else its first label. */
export function captionOf(n) {
  for (const key of CAPTION_KEYS) {
    const v = n.properties[key];
    if (v !== undefined && v !== null && typeof v !== "object") return String(v);
  }
  return n.labels[0] || n.id;
}

export class GraphView {
  /**
   * `elements`: { container, legend, stats, inspector, layoutButton };
   * `onExpand(node)` is called on a double-click with the node's entity.
   */
  constructor(elements, onExpand) {
    this.el = elements;
    this.onExpand = onExpand;
    this.colors = new Map();
    this.entities = new Map();
    this.graph = null;
    this.renderer = null;
    this.layout = null;
    this.layoutTimer = null;
    this.metrics = { shownAt: 0, firstFrameMs: null, frames: 0, lastRenderAt: 0 };
    this.picturePanning = () => false;
    this.el.layoutButton.addEventListener("click", () => (this.layoutRunning() ? this.stopLayout() : this.startLayout(4000)));
  }

  colorOf(label) {
    if (!label) return PALETTE[PALETTE.length - 1];
    if (!this.colors.has(label)) this.colors.set(label, PALETTE[this.colors.size % (PALETTE.length - 1)]);
    return this.colors.get(label);
  }

  /** Replaces the graph with the entities of `result`'s rows; `visible` says whether the view shows now. */
  show(result, visible) {
    this.destroy();
    this.graph = new Graph({ multi: true, allowSelfLoops: true, type: "directed" });
    this.entities.clear();
    this.metrics = { shownAt: performance.now(), firstFrameMs: null, frames: 0, lastRenderAt: 0 };
    this.merge(result.rows, null);
    if (visible) this.ensureRenderer();
  }

  /** True when the current result holds no node. */
  get empty() {
    return !this.graph || this.graph.order === 0;
  }

  /** Adds the entities in `rows`; new nodes start around `near` (a node id) when given. Answers how many nodes were new. */
  merge(rows, near) {
    const graph = this.graph;
    const fresh = new Map();
    const rels = [];
    walkEntities(
      rows,
      (n) => graph.hasNode(n.id) || fresh.set(n.id, n),
      (r) => rels.push(r),
    );
    // Sizes are fixed when nodes are added: resizing them afterwards would
    // make sigma reprocess every node.
    const total = graph.order + fresh.size;
    const size = total > 2000 ? 3 : total > 300 ? 5 : 8;
    const spread = Math.sqrt(total + 100) * 10;
    const origin = near && graph.hasNode(near) ? graph.getNodeAttributes(near) : { x: 0, y: 0 };
    for (const n of fresh.values()) {
      this.entities.set(n.id, n);
      const angle = Math.random() * 2 * Math.PI;
      const r = near ? 5 + Math.random() * 10 : Math.sqrt(Math.random()) * spread;
      graph.addNode(n.id, {
        x: origin.x + r * Math.cos(angle),
        y: origin.y + r * Math.sin(angle),
        label: captionOf(n),
        color: this.colorOf(n.labels[0]),
        size,
      });
    }
    for (const r of rels) {
      if (graph.hasEdge(r.id) || !graph.hasNode(r.start) || !graph.hasNode(r.end)) continue;
      this.entities.set(r.id, r);
      graph.addDirectedEdgeWithKey(r.id, r.start, r.end, { label: r.type, color: "#b8b8b8", size: 1 });
    }
    this.updateLegend();
    if (this.renderer && fresh.size) this.startLayout(this.layoutBudget());
    return fresh.size;
  }

  layoutBudget() {
    return Math.min(2000 + this.graph.order * 0.6, 10000);
  }

  /** Creates the renderer when the view is shown (sigma needs a sized container). */
  ensureRenderer() {
    if (this.renderer || !this.graph) {
      if (this.renderer) this.renderer.resize(), this.renderer.refresh();
      return;
    }
    const big = this.graph.size > BIG_GRAPH_EDGES;
    const renderer = new Sigma(this.graph, this.el.container, {
      allowInvalidContainer: true,
      // Plain (arrowless) edges for big graphs. Sigma's one-pixel GL line
      // program was measured slower to pan under SwiftShader.
      defaultEdgeType: big ? "line" : "arrow",
      renderEdgeLabels: this.graph.size <= 300,
      enableEdgeEvents: !big,
      hideEdgesOnMove: big,
      hideLabelsOnMove: big,
      labelRenderedSizeThreshold: big ? 10 : 6,
      labelDensity: 0.5,
      zIndex: false,
      itemSizesReference: "screen",
    });
    this.renderer = renderer;
    renderer.on("afterRender", () => {
      const m = this.metrics;
      m.frames++;
      m.lastRenderAt = performance.now();
      if (m.firstFrameMs === null && this.graph.order > 0) {
        m.firstFrameAt = performance.now();
        m.firstFrameMs = m.firstFrameAt - m.shownAt;
        this.el.stats.dataset.firstFrameMs = m.firstFrameMs.toFixed(0);
        // The layout starts once the first frame is out, not competing with it.
        setTimeout(() => this.renderer === renderer && this.startLayout(this.layoutBudget()), 0);
      }
    });
    renderer.on("clickNode", ({ node }) => this.inspect(node));
    renderer.on("clickEdge", ({ edge }) => this.inspect(edge));
    renderer.on("clickStage", () => this.inspect(null));
    renderer.on("doubleClickNode", (e) => {
      e.preventSigmaDefault();
      const n = this.entities.get(e.node);
      if (n) this.onExpand(n);
    });
    this.enableDrag(renderer);
    this.enablePicturePan(renderer);
    this.updateStats();
    if (this.metrics.firstFrameMs !== null) this.startLayout(this.layoutBudget());
  }

  enableDrag(renderer) {
    let dragged = null;
    renderer.on("downNode", (e) => {
      dragged = e.node;
      this.stopLayout();
      if (!renderer.getCustomBBox()) renderer.setCustomBBox(renderer.getBBox());
    });
    const captor = renderer.getMouseCaptor();
    captor.on("mousemovebody", (e) => {
      if (!dragged) return;
      const pos = renderer.viewportToGraph(e);
      this.graph.mergeNodeAttributes(dragged, { x: pos.x, y: pos.y });
      e.preventSigmaDefault();
      e.original.preventDefault();
      e.original.stopPropagation();
    });
    // The layout pauses while the mouse is down (panning or dragging), so
    // moving the camera never waits on layout updates; it resumes after.
    let paused = null;
    captor.on("mousedown", () => {
      if (this.layoutRunning()) (paused = this.layout).stop();
    });
    captor.on("mouseup", () => {
      dragged = null;
      if (paused && paused === this.layout) paused.start();
      paused = null;
    });
  }

  /**
   * Panning moves the drawn picture, not the camera: while the mouse drags
   * the background, the renderer's canvases are shifted with a CSS transform
   * (the compositor moves them; nothing is redrawn and no WebGL pixel is read
   * back for hover picking), and on release the camera takes the shift and
   * draws once. Under software rendering a sigma frame of a big graph costs
   * hundreds of milliseconds; a moved picture costs one composited frame.
   * Dragging a node and clicks are left to sigma.
   */
  enablePicturePan(renderer) {
    const container = this.el.container;
    const canvases = Object.values(renderer.getCanvases());
    let pan = null; // { x0, y0, dx, dy } while the background is dragged
    let swallowClick = false;
    const shift = (dx, dy) => {
      const t = dx || dy ? `translate(${dx}px, ${dy}px)` : "";
      for (const c of canvases) c.style.transform = t;
    };
    const onDown = (e) => {
      if (e.button !== 0) return;
      const box = container.getBoundingClientRect();
      const at = { x: e.clientX - box.left, y: e.clientY - box.top };
      if (renderer.getNodeAtPosition(at)) return; // sigma drags the node
      pan = { x0: e.clientX, y0: e.clientY, dx: 0, dy: 0, box };
    };
    const onMove = (e) => {
      if (!pan) return;
      // Sigma never sees the move: it would pan its camera (a full redraw)
      // and pick the hovered node (a synchronous GPU read) on every event.
      e.stopPropagation();
      pan.dx = e.clientX - pan.x0;
      pan.dy = e.clientY - pan.y0;
      shift(pan.dx, pan.dy);
    };
    const onUp = () => {
      if (!pan) return;
      const { x0, y0, dx, dy, box } = pan;
      pan = null;
      // Edges a layout ended during the pan would have drawn (see stopLayout).
      if (this.showEdgesAfterPan) this.showEdges();
      if (!dx && !dy) return;
      swallowClick = true;
      setTimeout(() => (swallowClick = false), 0);
      const from = renderer.viewportToFramedGraph({ x: x0 - box.left, y: y0 - box.top });
      const to = renderer.viewportToFramedGraph({ x: x0 - box.left + dx, y: y0 - box.top + dy });
      const camera = renderer.getCamera();
      const state = camera.getState();
      // The shift is undone in the same frame that draws the moved camera.
      renderer.once("afterRender", () => shift(0, 0));
      camera.setState({ x: state.x + from.x - to.x, y: state.y + from.y - to.y });
    };
    const onClick = (e) => {
      // The click that ends a pan is no click on the stage (nor half of a double-click).
      if (swallowClick) e.stopPropagation();
    };
    // Whether a press on the background is moving the picture now (for
    // tests that must know a press did not land on a node).
    this.picturePanning = () => pan !== null;
    container.addEventListener("mousedown", onDown, { capture: true });
    container.addEventListener("click", onClick, { capture: true });
    window.addEventListener("mousemove", onMove, { capture: true });
    window.addEventListener("mouseup", onUp, { capture: true });
    this.unbindPicturePan = () => {
      container.removeEventListener("mousedown", onDown, { capture: true });
      container.removeEventListener("click", onClick, { capture: true });
      window.removeEventListener("mousemove", onMove, { capture: true });
      window.removeEventListener("mouseup", onUp, { capture: true });
      shift(0, 0);
      this.picturePanning = () => false;
    };
  }

  layoutRunning() {
    return !!(this.layout && this.layout.isRunning());
  }

  /** Runs ForceAtlas2 in a worker for at most `ms` milliseconds. */
  startLayout(ms) {
    if (!this.graph || this.graph.order < 2) return;
    this.stopLayout();
    const settings = forceAtlas2.inferSettings(this.graph);
    settings.barnesHutOptimize = this.graph.order > 500;
    this.layout = new FA2Layout(this.graph, { settings });
    if (this.graph.order > BIG_LAYOUT_NODES) throttleLayoutUpdates(this.layout, LAYOUT_UPDATE_MS);
    this.layout.start();
    // A big graph's edges cost most of a frame under software rendering:
    // they are hidden while the layout moves the nodes, drawn when it stops.
    if (this.renderer && this.graph.size > BIG_GRAPH_EDGES && !this.edgesHidden) {
      this.edgesHidden = true;
      this.renderer.setSetting("edgeReducer", (_, data) => ({ ...data, hidden: true }));
    }
    this.el.layoutButton.textContent = "Stop layout";
    this.layoutTimer = setTimeout(() => this.stopLayout(), ms);
  }

  stopLayout() {
    clearTimeout(this.layoutTimer);
    if (this.layout) {
      this.layout.kill();
      this.layout = null;
    }
    this.el.layoutButton.textContent = "Run layout";
    // Drawing a big graph's edges again costs a long frame: never in the
    // middle of a pan (the layout's timer may end it there); the pan's
    // release draws them with the moved camera.
    if (this.picturePanning()) this.showEdgesAfterPan = true;
    else this.showEdges();
  }

  /** Draws the edges that a running layout hid. */
  showEdges() {
    this.showEdgesAfterPan = false;
    if (this.edgesHidden && this.renderer) this.renderer.setSetting("edgeReducer", null);
    this.edgesHidden = false;
  }

  /** The number of nodes the renderer draws (those it holds display data for, not hidden). */
  renderedNodeCount() {
    if (!this.renderer) return 0;
    let n = 0;
    this.graph.forEachNode((id) => {
      const d = this.renderer.getNodeDisplayData(id);
      if (d && !d.hidden) n++;
    });
    return n;
  }

  zoom(factor) {
    if (!this.renderer) return;
    const camera = this.renderer.getCamera();
    if (factor === 0) camera.animatedReset({ duration: 300 });
    else camera.animate({ ratio: camera.ratio / factor }, { duration: 200 });
  }

  /** Shows the properties of a node or relationship (by id), or hides the inspector. */
  inspect(id) {
    const box = this.el.inspector;
    const entity = id && this.entities.get(id);
    if (!entity) {
      box.hidden = true;
      return;
    }
    box.replaceChildren();
    const title = document.createElement("h3");
    if (entity.kind === "node") {
      for (const label of entity.labels) {
        const chip = document.createElement("span");
        chip.className = "chip";
        chip.style.background = this.colorOf(label);
        chip.textContent = label;
        title.append(chip);
      }
    } else {
      title.textContent = `[:${entity.type}]`;
    }
    box.append(title);
    const table = document.createElement("table");
    const rows = [["<id>", entity.id], ...Object.entries(entity.properties).map(([k, v]) => [k, format(v)])];
    if (entity.kind === "relationship") rows.splice(1, 0, ["<start>", entity.start], ["<end>", entity.end]);
    for (const [k, v] of rows) {
      const tr = table.insertRow();
      tr.insertCell().textContent = k;
      tr.insertCell().textContent = v;
    }
    box.append(table);
    if (entity.kind === "node") {
      const hint = document.createElement("p");
      hint.className = "muted";
      hint.textContent = "Double-click the node to expand its neighbours.";
      box.append(hint);
    }
    box.hidden = false;
    box.dataset.entity = entity.id;
  }

  updateLegend() {
    const counts = new Map();
    for (const e of this.entities.values()) {
      if (e.kind !== "node") continue;
      const key = e.labels[0] || "(no label)";
      counts.set(key, (counts.get(key) || 0) + 1);
    }
    this.el.legend.replaceChildren(
      ...[...counts].map(([label, count]) => {
        const chip = document.createElement("span");
        chip.className = "chip";
        chip.style.background = this.colorOf(label === "(no label)" ? null : label);
        chip.textContent = `${label} (${count})`;
        return chip;
      }),
    );
    this.updateStats();
  }

  updateStats() {
    if (!this.graph) return;
    this.el.stats.textContent = `${this.graph.order} nodes, ${this.graph.size} relationships`;
    this.el.stats.dataset.nodes = this.graph.order;
    this.el.stats.dataset.relationships = this.graph.size;
  }

  destroy() {
    this.stopLayout();
    this.edgesHidden = false;
    if (this.unbindPicturePan) this.unbindPicturePan(), (this.unbindPicturePan = null);
    if (this.renderer) {
      this.renderer.kill();
      this.renderer = null;
    }
    this.el.inspector.hidden = true;
  }
}
