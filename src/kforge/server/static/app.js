// Knowledge Forge web UI: plain JavaScript over the HTTP API, no build step.
"use strict";

const $ = (id) => document.getElementById(id);
const state = {
  runId: null, stream: null, treeStream: null, treeTimer: null, shown: null,
  lastSeq: 0, usage: { tokens: 0, cost: 0 }, phases: [], frames: [], seqs: {}, queue: [], drawing: null,
};

// -- API ------------------------------------------------------------------------------------

function token() { return sessionStorage.getItem("kforge-token") || ""; }

function headers(extra = {}) {
  const h = { ...extra };
  if (token()) h.Authorization = `Bearer ${token()}`;
  return h;
}

class ApiError extends Error {
  constructor(problem) { super(problem.detail || problem.title || "request failed"); this.problem = problem; }
}

async function api(method, path, body) {
  const sent = token();
  const init = { method, headers: headers(body === undefined ? {} : { "Content-Type": "application/json" }) };
  if (body !== undefined) init.body = JSON.stringify(body);
  let response;
  try {
    response = await fetch(path, init);
  } catch (err) {
    throw new ApiError({ detail: `cannot reach the server (${err.message}); is kforge serve running?` });
  }
  const text = await response.text();
  const data = text ? JSON.parse(text) : {};
  if (response.status === 401) {
    if (token() !== sent) return api(method, path, body);  // a token came meanwhile
    $("token-form").hidden = false;
  }
  if (!response.ok) throw new ApiError(data);
  return data;
}

function showError(err) {
  const problem = err.problem || {};
  $("error-text").textContent = (problem.status ? `${problem.status} ${problem.title}: ` : "") + err.message;
  $("error").hidden = false;
}

function clearError() { $("error").hidden = true; }

async function guarded(fn) {
  try { clearError(); return await fn(); } catch (err) { showError(err); return undefined; }
}

// -- SSE over fetch (so the token travels in a header, never in a URL) ----------------------

class FrameStream {
  constructor(path, { lastId, onEvent, onState }) {
    this.path = path; this.lastId = lastId; this.onEvent = onEvent; this.onState = onState;
    this.controller = new AbortController(); this.closed = false;
    this.loop();
  }

  close() { this.closed = true; this.controller.abort(); }

  async loop() {
    while (!this.closed) {
      try {
        const sent = token();
        const h = headers({ Accept: "text/event-stream" });
        if (this.lastId) h["Last-Event-ID"] = this.lastId;
        const response = await fetch(this.path, { headers: h, signal: this.controller.signal });
        if (this.closed) return;
        if (!response.ok) {
          const problem = await response.json().catch(() => ({}));
          if (this.closed) return;  // closed while the body was read: nobody waits for it
          if (response.status === 401) {
            if (token() !== sent) continue;  // a token came meanwhile: ask again with it
            $("token-form").hidden = false;
          }
          throw new ApiError(problem);
        }
        this.onState("live");
        if (await this.read(response.body.getReader())) { this.onState("ended"); return; }
      } catch (err) {
        if (this.closed) return;
        if (err instanceof ApiError) { showError(err); this.onState("stopped"); return; }
      }
      if (this.closed) return;
      this.onState("reconnecting");
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  }

  async read(reader) {
    const decoder = new TextDecoder();
    let buffer = "", event = { event: "message", data: [] };
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return false;
      buffer += decoder.decode(value, { stream: true });
      let cut;
      while ((cut = buffer.search(/\r\n|\n|\r/)) >= 0) {
        const line = buffer.slice(0, cut);
        buffer = buffer.slice(cut + (buffer.startsWith("\r\n", cut) ? 2 : 1));
        if (line === "") {
          if (event.data.length) {
            if (event.id !== undefined) this.lastId = event.id;
            if (event.event === "end") { this.onEvent("end", JSON.parse(event.data.join("\n"))); return true; }
            this.onEvent(event.event, JSON.parse(event.data.join("\n")));
          }
          event = { event: "message", data: [] };
        } else if (!line.startsWith(":")) {
          const at = line.indexOf(":");
          const name = at < 0 ? line : line.slice(0, at);
          const value = at < 0 ? "" : line.slice(at + 1).replace(/^ /, "");
          if (name === "event") event.event = value;
          else if (name === "data") event.data.push(value);
          else if (name === "id") event.id = value;
        }
      }
    }
  }
}

// -- runs list and start form ---------------------------------------------------------------

function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (k === "class") node.className = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else if (v !== undefined && v !== null) node.setAttribute(k, v);
  }
  for (const child of children) node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  return node;
}

function runLabel(run) {
  const args = run.args || {};
  return args.question || args.goal || args.prompt || run.agent;
}

async function loadRuns() {
  const status = $("runs-status").value;
  const data = await guarded(() => api("GET", `/runs?limit=50${status ? `&status=${status}` : ""}`));
  if (!data) return;
  $("server-status").textContent = "connected";
  const list = $("runs");
  list.replaceChildren(...data.runs.map((run) => el("li", {},
    el("a", { href: `#/runs/${run.id}`, "aria-current": run.id === state.runId ? "page" : null },
      el("span", { class: "q" }, runLabel(run)),
      el("span", { class: `badge ${run.status}` }, run.status), " ",
      el("span", { class: "muted" }, `${run.agent} · ${run.id.slice(0, 8)}`)))));
  if (!data.runs.length) list.append(el("li", { class: "muted" }, "No runs yet."));
  $("compare-runs").replaceChildren(...data.runs.map((run) => el("option", { value: run.id }, `${run.agent} · ${runLabel(run)}`)));
}

async function loadCorpora() {
  const data = await guarded(() => api("GET", "/corpora"));
  if (!data) return;
  const select = $("start-corpus");
  select.replaceChildren(...data.corpora.map((c) => el("option", { value: c.name }, c.name)));
  if (!data.corpora.length) select.append(el("option", { value: "samples" }, "samples"));
}

async function startRun(event) {
  event.preventDefault();
  const agent = $("start-agent").value;
  const question = $("start-question").value.trim();
  const run = await guarded(() => api("POST", "/runs", {
    agent, args: { question, corpus: $("start-corpus").value },
  }));
  if (run) { location.hash = `#/runs/${run.id}`; loadRuns(); }
}

// -- one run --------------------------------------------------------------------------------

// Frames come in bursts (a run's whole past at once): they are queued and drawn once a frame
// of the screen, so a run of thousands of frames renders in one pass instead of one per frame.
function addFrame(frame, { past = false } = {}) {
  const runId = frame.run_id || state.runId;
  const seen = state.seqs[runId] || 0;
  if (frame.seq <= seen) return;
  state.seqs[runId] = frame.seq;
  if (runId !== state.runId) { state.queue.push(frame); scheduleDraw(); return; }
  state.lastSeq = frame.seq;
  state.frames.push(frame);
  if (frame.type === "usage") {
    state.usage.tokens = (frame.run_input_tokens || 0) + (frame.run_output_tokens || 0)
      || state.usage.tokens + frame.input_tokens + frame.output_tokens;
    if (frame.cost_usd) state.usage.cost += frame.cost_usd;
  }
  if (frame.type === "phase.changed") state.phases.push({ name: frame.to_phase, back: frame.is_backward });
  state.queue.push(frame);
  scheduleDraw();
  if (!past && ["status.changed", "interaction.requested", "interaction.answered", "complete"].includes(frame.type)) {
    refreshRun();
  }
}

function scheduleDraw() {
  if (state.drawing) return;
  state.drawing = requestAnimationFrame(drawQueued);
}

function drawQueued() {
  state.drawing = null;
  const frames = state.queue.splice(0);
  if (!frames.length) return;
  const timeline = $("timeline");
  const atEnd = timeline.scrollHeight - timeline.scrollTop - timeline.clientHeight < 40;
  const batch = document.createDocumentFragment();
  const filtering = timelineFilter.group || timelineFilter.run || timelineFilter.text;
  for (const frame of frames) {
    const child = frame.run_id && frame.run_id !== state.runId;
    if (child) noteAgent(frame.run_id, `agent ${frame.run_id.slice(0, 8)}`);
    const row = frameRow(frame, child ? frame.run_id.slice(0, 8) : "");
    if (filtering) row.hidden = !rowVisible(row);
    batch.append(row);
  }
  timeline.append(batch);
  if (filtering) applyFilter();
  if (atEnd) timeline.scrollTop = timeline.scrollHeight;
  $("meter-frames").textContent = state.lastSeq;
  $("meter-tokens").textContent = state.usage.tokens;
  $("meter-cost").textContent = `$${state.usage.cost.toFixed(4)}`;
  renderPhases();
  if (frames.some((f) => f.type === "phase.changed")) scheduleGraph();
  document.dispatchEvent(new CustomEvent("frames-drawn", { detail: frames }));
}

function renderPhases() {
  const list = $("phases");
  list.replaceChildren(...state.phases.map((p, i) => el("li", {
    class: `${i === state.phases.length - 1 ? "current" : ""} ${p.back ? "back" : ""}`,
    "aria-current": i === state.phases.length - 1 ? "step" : null,
  }, p.name)));
}

// The run's stream sends a "status" event whenever its status, step count or question changes:
// the counters follow every step, and anything else the run shows is read again on a change.
function showProgress(progress) {
  if (progress.run_id !== state.runId) return;
  const before = state.shown;
  state.shown = progress;
  $("meter-steps").textContent = `${progress.steps} / ${progress.max_steps}`;
  scheduleGraph(); scheduleTrace();
  const status = $("run-status");
  status.textContent = progress.status; status.className = `badge ${progress.status}`;
  if (!before || before.status !== progress.status || before.interaction_id !== progress.interaction_id) {
    refreshRun();
  } else {
    scheduleTree();
  }
}

// The tree is drawn again (at most every 200 ms) when any run of it changes status or is steered,
// so children that start, finish or are deleted show while the root works on.
function scheduleTree() {
  if (state.treeTimer || !state.runId) return;
  state.treeTimer = setTimeout(() => { state.treeTimer = null; if (state.runId) renderTree(state.runId); }, 200);
  scheduleTrace();
}

function closeStreams() {
  if (state.stream) state.stream.close();
  if (state.treeStream) state.treeStream.close();
  state.stream = state.treeStream = null;
}

async function openRun(runId) {
  closeStreams();
  Object.assign(state, { runId, shown: null, lastSeq: 0, usage: { tokens: 0, cost: 0 }, phases: [],
    frames: [], seqs: {}, queue: [] });
  $("timeline").replaceChildren(); $("phases").replaceChildren(); resetFilters();
  $("graph").replaceChildren(); $("graph").dataset.agent = ""; closeInspect(); $("trace").replaceChildren();
  noteAgent(runId, `this run ${runId.slice(0, 8)}`);
  $("meter-tokens").textContent = "0"; $("meter-cost").textContent = "$0";
  $("empty").hidden = true; $("run").hidden = false; $("compare").hidden = true;
  const run = await refreshRun();
  if (run) {
    state.shown = { status: run.status, steps: run.steps, last_seq: run.last_seq, interaction_id: (run.pending_interaction || {}).interaction_id || null };
  }
  // the run's past in pages of JSON (far quicker than one event each), then the stream from there
  const past = run ? await guarded(() => allFrames(runId)) : null;
  if (runId !== state.runId) return;
  for (const frame of past || []) addFrame(frame, { past: true });
  state.stream = new FrameStream(`/runs/${runId}/stream`, {
    lastId: state.lastSeq ? String(state.lastSeq) : null,
    onEvent: (name, data) => (name === "end" ? refreshRun() : name === "status" ? showProgress(data) : addFrame(data)),
    onState: (s) => { $("live").textContent = s === "live" ? "● live" : s === "ended" ? "" : `(${s})`; },
  });
  state.treeStream = new FrameStream(`/agent/stream?root=${encodeURIComponent(runId)}`, {
    lastId: run ? `${runId}:${run.last_seq}` : null,  // the root's past is drawn already
    onEvent: (name, data) => {
      if (name === "end" || data.type === "status.changed" || data.type === "intervention") scheduleTree();
      // frames of the runs below this one join its timeline, labelled with their agent
      if (data && data.seq && data.run_id && data.run_id !== runId) addFrame(data);
    },
    onState: () => {},
  });
  for (const a of document.querySelectorAll("#runs a")) {
    a.setAttribute("aria-current", a.getAttribute("href") === `#/runs/${runId}` ? "page" : "false");
  }
}

async function refreshRun() {
  const runId = state.runId;
  if (!runId) return;
  const run = await guarded(() => api("GET", `/runs/${runId}`));
  if (!run || runId !== state.runId) return;
  state.run = run;
  $("compare-with-source").hidden = !run.forked_from;
  $("run-title").textContent = runLabel(run);
  if ($("graph").dataset.agent !== run.agent) { $("graph").dataset.agent = run.agent; scheduleGraph(); }
  // a reply read before the last status event must not put an older status or count back
  const current = !state.shown || state.shown.last_seq === undefined || state.shown.last_seq <= run.last_seq;
  const status = $("run-status");
  if (current) { status.textContent = run.status; status.className = `badge ${run.status}`; }
  $("run-meta").textContent = `${run.agent} · ${run.id} · ${run.model || ""}${run.error ? " · " + run.error : ""}${run.pause_reason ? " · " + run.pause_reason : ""}`;
  if (current) $("meter-steps").textContent = `${run.steps} / ${run.max_steps}`;
  const ended = ["completed", "failed", "cancelled", "deleted"].includes(run.status);
  $("run-cancel").disabled = ended;
  renderCheckpoint(run);
  renderReport(run);
  renderTree(run.id);
  loadRuns();
  return run;
}

// -- checkpoint and question forms ----------------------------------------------------------

function renderCheckpoint(run) {
  const pending = run.status === "awaiting_user" ? run.pending_interaction : null;
  const box = $("checkpoint");
  if (!pending) { box.hidden = true; box.dataset.interaction = ""; return; }
  if (box.dataset.interaction === pending.interaction_id) return;  // keep what is being edited
  box.dataset.interaction = pending.interaction_id;
  box.hidden = false;
  $("checkpoint-prompt").textContent = pending.prompt;
  const options = pending.options || [];
  const payload = pending.payload || {};
  const editor = $("tree-editor");
  editor.replaceChildren();
  if (Array.isArray(payload.categories)) {
    editor.append(el("p", { class: "muted" }, "The question tree: edit names or questions (one per line), then Modify; or Approve it as it is."));
    payload.categories.forEach((c, i) => editor.append(categoryFieldset(c, i)));
    editor.append(el("button", { type: "button", class: "secondary", onclick: () => {
      editor.insertBefore(categoryFieldset({ name: "", questions: [] }, editor.querySelectorAll("fieldset").length), editor.lastChild);
    } }, "Add a category"));
  } else if (Object.keys(payload).length) {
    editor.append(el("pre", {}, JSON.stringify(payload, null, 2)));
  }
  $("free-answer").hidden = options.length > 0;
  $("reject-box").hidden = !options.includes("reject");
  const actions = $("checkpoint-actions");
  const labels = { approve: "Approve", modify: "Modify", reject: "Reject" };
  actions.replaceChildren(...(options.length ? options : ["send"]).map((o) => el("button", {
    type: "button", class: o === "reject" ? "danger" : o === "modify" ? "secondary" : "",
    onclick: () => answer(run.id, pending, o),
  }, labels[o] || (o === "send" ? "Send answer" : o))));
}

function categoryFieldset(category, index) {
  return el("fieldset", { class: "category" },
    el("legend", {}, `Category ${index + 1}`),
    el("label", { for: `cat-name-${index}` }, "Name"),
    el("input", { id: `cat-name-${index}`, class: "cat-name", value: category.name || "" }),
    el("label", { for: `cat-questions-${index}` }, "Questions, one per line"),
    (() => { const t = el("textarea", { id: `cat-questions-${index}`, class: "cat-questions", rows: 3 }); t.value = (category.questions || []).join("\n"); return t; })());
}

function editedTree() {
  return [...document.querySelectorAll("#tree-editor fieldset")].map((f) => ({
    name: f.querySelector(".cat-name").value.trim() || "Untitled",
    questions: f.querySelector(".cat-questions").value.split("\n").map((q) => q.trim()).filter(Boolean),
  })).filter((c) => c.questions.length);
}

async function answer(runId, pending, option) {
  let body;
  if (option === "send") body = { text: $("answer-text").value };
  else if (option === "modify") body = { action: "modify", modifications: { categories: editedTree() } };
  else if (option === "reject") body = { action: "reject", reason: $("reject-reason").value || undefined };
  else body = { action: option };
  body.interaction_id = pending.interaction_id;
  const run = await guarded(() => api("POST", `/runs/${runId}/answer`, body));
  const box = $("checkpoint");
  // a newer question may already be showing (the stream can beat this response): keep it
  if (run && box.dataset.interaction === pending.interaction_id) {
    box.hidden = true; box.dataset.interaction = ""; focusTimeline();
  }
}

// -- report and tree ------------------------------------------------------------------------

function renderReport(run) {
  // the text its agent's result type declares, and the Sources it cites (as kforge ask prints them)
  const text = run.text || "";
  const sources = run.sources || [];
  $("report-section").hidden = !text;
  $("report").innerHTML = text ? markdown(text) : "";
  if (text && sources.length) {
    $("report").append(el("h3", {}, "Sources"), el("ul", {}, ...sources.map((s) => el("li", {}, s))));
  }
}

async function renderTree(rootId) {
  const data = await guarded(() => api("GET", `/agent/tree?root=${encodeURIComponent(rootId)}`));
  if (!data) return;
  const node = (id) => {
    const a = data.agents[id];
    // agent states of the tree (docs/architecture.md): a finished agent takes no intervention
    const ended = ["completed", "error", "deleted"].includes(a.status);
    const item = el("li", { "data-agent": id },
      el("div", { class: "node" },
        el("a", { href: `#/runs/${id}` }, `${a.agent} ${id.slice(0, 8)}`),
        el("span", { class: `badge ${a.status}` }, a.status),
        el("span", { class: "muted" }, (a.userContent || "").slice(0, 80)),
        el("button", { type: "button", class: "danger", disabled: ended ? "" : null,
          "aria-label": `Delete agent ${id.slice(0, 8)}`, onclick: () => intervene(id, "delete") }, "Delete"),
        el("button", { type: "button", class: "secondary", disabled: ended ? "" : null,
          "aria-label": `Modify agent ${id.slice(0, 8)}`, onclick: () => intervene(id, "modify") }, "Modify"),
        el("button", { type: "button", class: "secondary", disabled: ended ? "" : null,
          "aria-label": `Comment on agent ${id.slice(0, 8)}`, onclick: () => intervene(id, "comment") }, "Comment")));
    if (a.subagents.length) item.append(el("ul", {}, ...a.subagents.map(node)));
    return item;
  };
  $("tree").replaceChildren(...data.roots.map(node));
}

async function intervene(agentId, action) {
  let content = "";
  if (action === "delete" && !confirm(`Delete agent ${agentId.slice(0, 8)} and the agents below it?`)) return;
  if (action !== "delete") {
    content = prompt(action === "modify" ? "New instructions for this agent:" : "Your comment:") || "";
    if (!content.trim()) return;
  }
  const done = await guarded(() => api("POST", `/agent/${agentId}/intervene`, { action, content }));
  if (done) refreshRun();
}

// -- wiring ---------------------------------------------------------------------------------

function route() {
  const match = location.hash.match(/^#\/runs\/([A-Za-z0-9_-]+)/);
  const pair = location.hash.match(/^#\/compare\/([A-Za-z0-9_-]+)\/([A-Za-z0-9_-]+)/);
  if (match) { if (match[1] !== state.runId) openRun(match[1]); }
  else if (pair) openCompare(pair[1], pair[2]);
  else { closeStreams(); state.runId = null; $("run").hidden = true; $("compare").hidden = true; $("empty").hidden = false; }
}

document.addEventListener("DOMContentLoaded", () => {
  $("start-form").addEventListener("submit", startRun);
  $("runs-refresh").addEventListener("click", loadRuns);
  $("runs-status").addEventListener("change", loadRuns);
  $("error-close").addEventListener("click", clearError);
  wireFilters();
  wireInspect();
  wireCompare();
  wireTrace();
  $("run-cancel").addEventListener("click", () => guarded(async () => {
    await api("POST", `/runs/${state.runId}/cancel`, { reason: "cancelled in the web UI" }); refreshRun();
  }));
  $("run-fork").addEventListener("click", () => guarded(async () => {
    const run = await api("POST", `/runs/${state.runId}/fork`, {});
    location.hash = `#/runs/${run.id}`;
  }));
  $("token-form").addEventListener("submit", (event) => {
    event.preventDefault();
    sessionStorage.setItem("kforge-token", $("token").value);
    $("token-form").hidden = true; clearError();
    loadRuns(); loadCorpora(); if (state.runId) { const id = state.runId; state.runId = null; openRun(id); }
  });
  window.addEventListener("hashchange", route);
  loadRuns(); loadCorpora(); route();
});
