// The phase graph drawn as SVG from the agent's PhaseGraph: phases left to right, forward
// transitions above, backward ones below (dashed, with their triggers), visit counts, the path
// the run took and the phase it is in. An agent without phases shows its steps in a row.
"use strict";

const SVG_NS = "http://www.w3.org/2000/svg";
const graphs = {};  // agent type → its graph, read once

function svg(tag, attrs = {}, text) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== undefined && v !== null) node.setAttribute(k, v);
  if (text !== undefined) node.textContent = text;
  return node;
}

async function agentGraph(agent) {
  if (!graphs[agent]) graphs[agent] = api("GET", `/agents/${encodeURIComponent(agent)}/graph`).catch(() => null);
  return graphs[agent];
}

// What the frames say of the phases: visits per phase, times each edge was taken, the current one.
function phaseWalk(frames) {
  const visits = {}, taken = {};
  let current = null;
  for (const f of frames) {
    if (f.type !== "phase.changed") continue;
    visits[f.to_phase] = (visits[f.to_phase] || 0) + 1;
    if (f.from_phase) taken[`${f.from_phase}→${f.to_phase}`] = (taken[`${f.from_phase}→${f.to_phase}`] || 0) + 1;
    current = f.to_phase;
  }
  return { visits, taken, current };
}

const NODE_W = 128, NODE_H = 46, GAP = 150, MID = 110, HEIGHT = 235;

function drawPhaseGraph(graph, frames) {
  const { visits, taken, current } = phaseWalk(frames);
  const phases = graph.phases;
  const x = (name) => 16 + phases.indexOf(name) * (NODE_W + GAP);
  const width = 32 + phases.length * NODE_W + (phases.length - 1) * GAP;
  const root = svg("svg", { viewBox: `0 0 ${width} ${HEIGHT}`, width, height: HEIGHT, role: "img",
    "aria-label": `Phase graph: ${phases.join(", ")}; now in ${current || "no phase yet"}` });
  const defs = svg("defs");
  for (const kind of ["fwd", "back", "taken"]) {
    const marker = svg("marker", { id: `arrow-${kind}`, viewBox: "0 0 10 10", refX: 9, refY: 5,
      markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse" });
    marker.append(svg("path", { d: "M0,0 L10,5 L0,10 z", class: `arrowhead ${kind}` }));
    defs.append(marker);
  }
  root.append(defs);
  const seen = {};
  for (const t of graph.transitions) {
    const a = phases.indexOf(t.from), b = phases.indexOf(t.to);
    const key = `${t.from}→${t.to}`;
    const times = taken[key] || 0;
    const offset = (seen[key] = (seen[key] || 0) + 1) - 1;
    const span = Math.abs(b - a);
    let d, lx, ly;
    if (!t.is_backward && b === a + 1) {
      d = `M${x(t.from) + NODE_W},${MID} L${x(t.to)},${MID}`;
      lx = (x(t.from) + NODE_W + x(t.to)) / 2; ly = MID - 6;
    } else {
      const up = !t.is_backward;
      const y0 = up ? MID - NODE_H / 2 : MID + NODE_H / 2;
      const bend = (up ? -1 : 1) * (28 + 22 * span + 14 * offset);
      const x0 = x(t.from) + NODE_W / 2 + (t.is_backward ? -14 : 14), x1 = x(t.to) + NODE_W / 2 + (t.is_backward ? 14 : -14);
      d = `M${x0},${y0} C${x0},${y0 + bend} ${x1},${y0 + bend} ${x1},${y0}`;
      lx = (x0 + x1) / 2; ly = y0 + bend * 0.75 + (up ? -4 : 12);
    }
    const kind = t.is_backward ? "back" : "fwd";
    const edge = svg("g", { class: `edge ${kind}${times ? " taken" : ""}`, "data-from": t.from, "data-to": t.to });
    edge.append(svg("title", {}, `${t.from} → ${t.to} when ${t.condition}${t.is_backward ? " (backward)" : ""}${t.priority ? `, priority ${t.priority}` : ""}${times ? `; taken ${times}×` : ""}`));
    edge.append(svg("path", { d, fill: "none", "marker-end": `url(#arrow-${times ? "taken" : kind})` }));
    edge.append(svg("text", { x: lx, y: ly, "text-anchor": "middle", class: "cond" },
      `${t.condition}${times ? ` ×${times}` : ""}`));
    root.append(edge);
  }
  const checkpoints = Object.fromEntries((graph.checkpoints || []).map((c) => [c.after, c]));
  for (const name of phases) {
    const n = visits[name] || 0;
    const node = svg("g", { class: `phase${name === current ? " current" : ""}${n ? " visited" : ""}`,
      "data-phase": name, tabindex: 0, "aria-current": name === current ? "step" : null });
    node.append(svg("title", {}, `${name}: ${n} visit${n === 1 ? "" : "s"}${name === graph.initial ? " (first phase)" : ""}${checkpoints[name] ? `; then a ${checkpoints[name].kind} checkpoint: ${checkpoints[name].message}` : ""}`));
    node.append(svg("rect", { x: x(name), y: MID - NODE_H / 2, width: NODE_W, height: NODE_H, rx: 8 }));
    node.append(svg("text", { x: x(name) + NODE_W / 2, y: MID - 3, "text-anchor": "middle", class: "name" }, name));
    node.append(svg("text", { x: x(name) + NODE_W / 2, y: MID + 14, "text-anchor": "middle", class: "visits" },
      n ? `${n} visit${n === 1 ? "" : "s"}` : "not visited"));
    if (checkpoints[name]) {
      // a pause sign: the run stops for a person after this phase
      const cx = x(name) + NODE_W - 14, cy = MID - NODE_H / 2 + 5;
      const mark = svg("g", { class: `checkpoint ${checkpoints[name].kind}` });
      mark.append(svg("rect", { x: cx, y: cy, width: 3, height: 9 }), svg("rect", { x: cx + 6, y: cy, width: 3, height: 9 }));
      node.append(mark);
    }
    root.append(node);
  }
  return root;
}

// An agent without phases: its steps in a row, the last one taken highlighted.
function drawSteps(steps) {
  const shown = steps <= 30 ? [...Array(steps).keys()].map((i) => i + 1)
    : [1, 2, 3, null, ...[...Array(25).keys()].map((i) => steps - 24 + i)];
  const width = 24 + Math.max(shown.length, 1) * 40;
  const root = svg("svg", { viewBox: `0 0 ${width} 60`, width, height: 60, role: "img",
    "aria-label": `No phases: ${steps} step${steps === 1 ? "" : "s"} taken` });
  if (!steps) root.append(svg("text", { x: 12, y: 34, class: "visits" }, "no step taken yet"));
  shown.forEach((n, i) => {
    const cx = 30 + i * 40;
    if (i) root.append(svg("line", { x1: cx - 26, y1: 30, x2: cx - 14, y2: 30, class: "step-link" }));
    if (n === null) { root.append(svg("text", { x: cx, y: 35, "text-anchor": "middle" }, "…")); return; }
    const g = svg("g", { class: `step${n === steps ? " current" : ""}`, "data-step": n });
    g.append(svg("circle", { cx, cy: 30, r: 14 }), svg("text", { x: cx, y: 34, "text-anchor": "middle" }, n));
    root.append(g);
  });
  return root;
}

async function renderGraph() {
  const box = document.getElementById("graph");
  const agent = box.dataset.agent;
  if (!agent) return;
  const graph = await agentGraph(agent);
  if (box.dataset.agent !== agent) return;
  const steps = state.shown && state.shown.steps !== undefined ? state.shown.steps : 0;
  box.replaceChildren(graph && graph.phases.length ? drawPhaseGraph(graph, state.frames) : drawSteps(steps));
}

let graphTimer = null;
function scheduleGraph() {
  if (graphTimer) return;
  graphTimer = setTimeout(() => { graphTimer = null; renderGraph(); }, 100);
}
