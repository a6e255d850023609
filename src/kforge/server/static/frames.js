// Frames as what they mean: one row per frame, its detail folded, its raw JSON one click away;
// the timeline filtered by type and agent and searched by text.
"use strict";

const FRAME_GROUPS = {
  phase: ["phase.changed", "phase.checkpoint"],
  model: ["model.call", "usage", "agent.thinking", "agent.speaking", "agent.plan", "agent.reflection",
    "agent.observation", "agent.response", "agent.control", "agent.status", "context.compaction"],
  tool: ["tool.call", "tool.result"],
  people: ["interaction.requested", "interaction.answered", "intervention"],
  lifecycle: ["status.changed", "complete", "error", "limit.reached", "limit.warning"],
};

function frameGroup(type) {
  for (const [group, types] of Object.entries(FRAME_GROUPS)) if (types.includes(type)) return group;
  return type.startsWith("data.") ? "data" : "other";
}

const clip = (s, n = 300) => (s && s.length > n ? `${s.slice(0, n)}…` : s || "");
const asJson = (v) => JSON.stringify(v);

// One line saying what the frame means.
function describe(frame) {
  const t = frame.type;
  if (t === "phase.changed") return `${frame.from_phase || "start"} → ${frame.to_phase}${frame.visit > 1 ? ` (visit ${frame.visit})` : ""}${frame.is_backward ? " ↩ back: " + (frame.reason || "") : frame.reason ? " when " + frame.reason : ""}`;
  if (t === "status.changed") return `${frame.from_status || "new"} → ${frame.to_status}${frame.reason ? ": " + frame.reason : ""}`;
  if (t === "tool.call") return `calls ${frame.tool_name}(${clip(asJson(frame.arguments), 200)})`;
  if (t === "tool.result") {
    if (!frame.success) return `${frame.tool_name} failed: ${frame.error}`;
    return `${frame.tool_name} → ${clip(frame.summary)} (${Math.round(frame.execution_time_ms)} ms${frame.cached ? ", cached" : ""})`;
  }
  if (t === "model.call") {
    const u = (frame.response && frame.response.usage) || {};
    return `${frame.model} ${frame.purpose || ""} · ${(u.input_tokens || 0) + (u.output_tokens || 0)} tokens · ${Math.round(frame.duration_ms)} ms`;
  }
  if (t === "usage") return `${frame.input_tokens} in / ${frame.output_tokens} out${frame.cost_usd ? ` · $${frame.cost_usd.toFixed(4)}` : ""}`;
  if (t === "interaction.requested") return `asks: ${frame.prompt}${frame.options && frame.options.length ? ` [${frame.options.join(" / ")}]` : ""}`;
  if (t === "interaction.answered") return `answered: ${clip(asJson(frame.answer))}`;
  if (t === "agent.thinking") return clip(frame.message);
  if (t === "agent.speaking") return clip(frame.text);
  if (t === "agent.plan") return `plan: ${clip(frame.reasoning, 200)} → ${frame.next_action}`;
  if (t === "agent.response") return clip(frame.response_text);
  if (t === "agent.reflection") return `reflects on ${frame.error_type}: ${clip(frame.suggested_fix, 200)}`;
  if (t === "complete") return `${frame.partial ? "partial result: " : ""}${frame.summary}`;
  if (t === "error") return `${frame.error_type}: ${frame.message}`;
  if (t === "limit.reached") return `limit ${frame.limit}: ${frame.value} of ${frame.maximum}`;
  if (t === "intervention") return `${frame.action}${frame.content ? ": " + frame.content : ""}`;
  if (t === "phase.checkpoint") return `checkpoint after ${frame.phase}: ${frame.message}`;
  if (t.startsWith("data.")) return clip(asJson(frame.payload));
  const { id, run_id, seq, created_at, type, ...rest } = frame;
  return clip(asJson(rest));
}

// What a frame holds beyond its line, folded: [label, text] pairs (made only when opened).
function frameDetail(frame) {
  const t = frame.type;
  const pretty = (v) => JSON.stringify(v, null, 2);
  if (t === "model.call") {
    // the reply (what a resumed run replays); the prompt beside it is read when it is opened
    const r = frame.response || {};
    const parts = [["Reply", r.text || "(no text)"]];
    if (r.parsed !== null && r.parsed !== undefined) parts.push(["Structured output", pretty(r.parsed)]);
    if (r.tool_calls && r.tool_calls.length) parts.push(["Tool calls", pretty(r.tool_calls)]);
    return parts;
  }
  if (t === "tool.call") return [["Arguments", pretty(frame.arguments)], ...(frame.reasoning ? [["Why", frame.reasoning]] : [])];
  if (t === "tool.result") return [["Result", frame.success ? pretty(frame.result) : frame.error]];
  if (t === "complete") {
    const r = frame.result || {};
    return [["Answer", r.report || r.answer || pretty(r)]];
  }
  if (t === "interaction.requested" && frame.payload && Object.keys(frame.payload).length) return [["Asked about", pretty(frame.payload)]];
  if (t === "phase.checkpoint" && Object.keys(frame.payload || {}).length) return [["Payload", pretty(frame.payload)]];
  if (t === "agent.response") return [["Response", frame.response_text], ["Trace", frame.reasoning_trace || ""]];
  return null;
}

function frameFolded(frame) {
  const parts = frameDetail(frame);
  if (!parts) return null;
  const call = frame.type === "model.call";
  const labels = parts.map((p) => p[0]).join(" · ");
  // out of the tab order: the row is the one tab stop, its controls are reached with the arrows
  const box = el("details", { class: call ? "fold call" : "fold" },
    el("summary", { tabindex: "-1" }, call ? `Prompt · ${labels}` : labels));
  box.addEventListener("toggle", () => {
    if (!box.open || box.dataset.filled) return;
    box.dataset.filled = "1";
    const shown = parts.flatMap(([label, text]) => [el("h4", {}, label), el("pre", {}, text)]);
    if (!call) { box.append(...shown); return; }
    const prompt = el("section", { class: "prompt", "aria-label": `Prompt of model call ${frame.seq}` },
      el("h4", {}, "Prompt"), el("p", { class: "muted prompt-note" }, "reading the prompt…"));
    box.append(el("div", { class: "call-parts" }, prompt,
      el("section", { class: "reply", "aria-label": `Reply of model call ${frame.seq}` }, ...shown)));
    showPrompt(frame, prompt);
  });
  return box;
}

// The prompt a model call was sent, rebuilt by the server from the messages each call records
// (those new since the call before it), one fold per message.
async function showPrompt(frame, section) {
  const note = section.querySelector(".prompt-note");
  let data;
  try {
    data = await api("GET", `/runs/${frame.run_id || state.runId}/calls/${frame.seq}/prompt`);
  } catch (err) {
    note.textContent = `the prompt could not be read: ${err.message}`;
    return;
  }
  if (!data.recorded) {
    note.textContent = "prompt not recorded (this call was recorded before prompts were)";
    return;
  }
  const fresh = data.messages.filter((m) => m.fresh).length;
  note.textContent = `${data.messages.length} message${data.messages.length === 1 ? "" : "s"}, `
    + `${fresh} new in this call${data.base_seq ? `, the others as in the call of frame ${data.base_seq}` : ""}`;
  // not a list: the timeline's rows are its only list items
  section.append(el("div", { class: "messages" }, ...data.messages.map(messageFold)));
}

function messageFold(message) {
  let text = message.content;
  if (message.tool_calls && message.tool_calls.length) {
    text += `${text ? "\n\n" : ""}Tool calls: ${JSON.stringify(message.tool_calls, null, 2)}`;
  }
  const who = message.role + (message.name ? ` (${message.name})` : "");
  const line = message.content.replace(/\s+/g, " ").trim();
  return el("details", { class: `message m-${message.role}${message.fresh ? " fresh" : ""}`, "data-role": message.role },
    el("summary", { tabindex: "-1" }, el("span", { class: "role" }, who),
      el("span", { class: "muted" }, ` ${message.content.length} chars${message.fresh ? " · new" : ""} · ${clip(line, 90)}`)),
    el("pre", {}, text));
}

// The timeline row of a frame; `agent` labels frames of runs below the one shown.
function frameRow(frame, agent) {
  const raw = el("button", { type: "button", class: "raw-toggle secondary", "aria-expanded": "false",
    "aria-label": `Raw JSON of frame ${frame.seq}`, tabindex: "-1" }, "{ }");
  const pick = el("button", { type: "button", class: "seq", "aria-label": `Frame ${frame.seq}: state after it`, tabindex: "-1" }, frame.seq);
  const text = el("span", { class: "text" }, describe(frame));
  const row = el("li", { tabindex: "0", "aria-describedby": "timeline-keys", "data-seq": frame.seq, "data-type": frame.type, "data-group": frameGroup(frame.type),
    "data-run": frame.run_id || "", class: `f-${frameGroup(frame.type)}${frame.is_backward ? " back" : ""}` },
    pick, el("span", { class: "type" }, frame.type, agent ? el("span", { class: "agent" }, agent) : ""), text, raw);
  const folded = frameFolded(frame);
  if (folded) text.append(folded);
  raw.addEventListener("click", () => {
    const shown = row.querySelector("pre.raw");
    if (shown) { shown.remove(); raw.setAttribute("aria-expanded", "false"); return; }
    row.append(el("pre", { class: "raw" }, JSON.stringify(frame, null, 2)));
    raw.setAttribute("aria-expanded", "true");
  });
  pick.addEventListener("click", () => document.dispatchEvent(new CustomEvent("frame-picked", { detail: frame })));
  row._search = `${frame.seq} ${frame.type} ${text.textContent}`.toLowerCase();
  return row;
}

// -- filters and search -------------------------------------------------------------------

const timelineFilter = { group: "", run: "", text: "" };

function rowVisible(row) {
  return (!timelineFilter.group || row.dataset.group === timelineFilter.group)
    && (!timelineFilter.run || row.dataset.run === timelineFilter.run)
    && (!timelineFilter.text || row._search.includes(timelineFilter.text));
}

function applyFilter() {
  let shown = 0, total = 0;
  for (const row of document.getElementById("timeline").children) {
    total += 1;
    const visible = rowVisible(row);
    row.hidden = !visible;
    if (visible) shown += 1;
  }
  const active = timelineFilter.group || timelineFilter.run || timelineFilter.text;
  document.getElementById("timeline-count").textContent = active ? `${shown} of ${total} frames` : "";
}

function noteAgent(runId, label) {
  const select = document.getElementById("filter-agent");
  if (!runId || select.querySelector(`option[value="${CSS.escape(runId)}"]`)) return;
  select.append(el("option", { value: runId }, label));
}

function resetFilters() {
  Object.assign(timelineFilter, { group: "", run: "", text: "" });
  document.getElementById("filter-type").value = "";
  document.getElementById("filter-search").value = "";
  const agents = document.getElementById("filter-agent");
  agents.replaceChildren(el("option", { value: "" }, "all agents"));
  document.getElementById("timeline-count").textContent = "";
}

// Each row is one tab stop. Up and down arrows move between the frames shown (Home and End to
// the first and last); Enter on a row shows the state after it; right and left arrows walk the
// row's controls (its folds, the messages of a prompt, the raw JSON) and Escape goes back to
// the row, so a long timeline is read from the keyboard without tabbing through every control.
function walkTimeline(event) {
  const row = event.target.closest && event.target.closest("#timeline > li");
  if (!row || event.target.matches("input, textarea, select")) return;
  if (event.key === "Enter" && event.target === row) {
    event.preventDefault();
    row.querySelector("button.seq").click();
    return;
  }
  if (event.key === "Escape" && event.target !== row) { event.preventDefault(); row.focus(); return; }
  if (event.key === "ArrowRight" || event.key === "ArrowLeft") {
    const controls = [...row.querySelectorAll("button, summary")].filter((c) => c.checkVisibility());
    const at = controls.indexOf(event.target);  // -1 on the row itself
    const to = event.key === "ArrowRight" ? Math.min(at + 1, controls.length - 1) : at - 1;
    event.preventDefault();
    (to < 0 ? row : controls[to]).focus();
    return;
  }
  const keys = ["ArrowDown", "ArrowUp", "Home", "End"];
  if (!keys.includes(event.key)) return;
  const rows = [...document.getElementById("timeline").children].filter((r) => !r.hidden);
  const at = rows.indexOf(row);
  const to = { ArrowDown: at + 1, ArrowUp: at - 1, Home: 0, End: rows.length - 1 }[event.key];
  if (to < 0 || to >= rows.length) return;
  event.preventDefault();
  rows[to].focus();
}

function wireFilters() {
  document.getElementById("timeline").addEventListener("keydown", walkTimeline);
  let timer = null;
  document.getElementById("filter-type").addEventListener("change", (e) => { timelineFilter.group = e.target.value; applyFilter(); });
  document.getElementById("filter-agent").addEventListener("change", (e) => { timelineFilter.run = e.target.value; applyFilter(); });
  document.getElementById("filter-search").addEventListener("input", (e) => {
    clearTimeout(timer);
    timer = setTimeout(() => { timelineFilter.text = e.target.value.trim().toLowerCase(); applyFilter(); }, 120);
  });
  document.getElementById("filter-form").addEventListener("submit", (e) => e.preventDefault());
}

// Back to the timeline (once a form closes): the selected frame's row, else the last one shown.
function focusTimeline() {
  const rows = [...document.getElementById("timeline").children].filter((r) => !r.hidden);
  const row = rows.find((r) => r.classList.contains("selected")) || rows[rows.length - 1];
  if (row) row.focus();
}
