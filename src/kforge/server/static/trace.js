// The run as a trace: a waterfall of its stretches, steps, model calls and tool calls with
// durations, tokens and cost, its pauses and questions on the same time axis, and the child
// runs it started nested under the step that started them.
"use strict";

const ms = (iso) => Date.parse(iso);

function duration(msValue) {
  if (msValue < 1) return `${msValue.toFixed(2)} ms`;
  if (msValue < 1000) return `${Math.round(msValue)} ms`;
  if (msValue < 60000) return `${(msValue / 1000).toFixed(1)} s`;
  return `${Math.floor(msValue / 60000)} min ${Math.round((msValue % 60000) / 1000)} s`;
}

// Spans from the frames: [{kind, label, start, end, depth, tokens, cost, href, seq}].
function traceSpans(frames, steps, children, now) {
  const spans = [];
  const bySeq = new Map(frames.map((f) => [f.seq, f]));
  const last = frames.length ? ms(frames[frames.length - 1].created_at) : now;
  // stretches (running) and pauses (waiting for a person, paused), from the status changes
  let open = null;
  for (const f of frames) {
    if (f.type !== "status.changed") continue;
    const at = ms(f.created_at);
    if (open) { open.end = at; spans.push(open); open = null; }
    if (f.to_status === "running") open = { kind: "stretch", label: "stretch", start: at, depth: 0, seq: f.seq };
    else if (f.to_status === "awaiting_user" || f.to_status === "paused") {
      open = { kind: "pause", label: f.to_status === "paused" ? `paused${f.reason ? ": " + f.reason : ""}` : "waiting for a person", start: at, depth: 0, seq: f.seq };
    }
  }
  if (open) { open.end = open.kind === "pause" ? Math.max(now, last) : last; open.ongoing = true; spans.push(open); }
  const stretchStarts = spans.filter((s) => s.kind === "stretch").map((s) => s.start);
  // steps: from the end of the step before (or the stretch's start) to their last frame
  let previousEnd = frames.length ? ms(frames[0].created_at) : now, previousSeq = 0;
  const stepSpans = [];
  for (const { step, seq } of steps) {
    const end = bySeq.has(seq) ? ms(bySeq.get(seq).created_at) : previousEnd;
    const resumed = stretchStarts.filter((t) => t > previousEnd && t <= end);
    const start = resumed.length ? resumed[resumed.length - 1] : previousEnd;
    if (step > 0) stepSpans.push({ kind: "step", label: `step ${step}`, start, end, depth: 1, first: previousSeq + 1, seq, tokens: 0, cost: 0 });
    previousEnd = end; previousSeq = seq;
  }
  const stepOf = (seq) => stepSpans.find((s) => seq >= s.first && seq <= s.seq);
  // model calls (they end when recorded), tool calls (call to result), questions (asked to answered)
  const calls = new Map();
  let lastModel = null;
  for (const f of frames) {
    const at = ms(f.created_at);
    if (f.type === "model.call") {
      const u = (f.response && f.response.usage) || {};
      const tokens = (u.input_tokens || 0) + (u.output_tokens || 0);
      lastModel = { kind: "model", label: `model ${f.model}${f.purpose ? " · " + f.purpose : ""}`, start: at - (f.duration_ms || 0), end: at, depth: 2, tokens, seq: f.seq };
      spans.push(lastModel);
      const step = stepOf(f.seq);
      if (step) step.tokens += tokens;
    } else if (f.type === "usage" && lastModel && f.cost_usd) {
      lastModel.cost = f.cost_usd;
      const step = stepOf(f.seq);
      if (step) step.cost += f.cost_usd;
    } else if (f.type === "tool.call") {
      const span = { kind: "tool", label: `tool ${f.tool_name}`, start: at, end: at, depth: 2, seq: f.seq, ongoing: true };
      calls.set(f.call_id, span); spans.push(span);
    } else if (f.type === "tool.result" && calls.has(f.call_id)) {
      const span = calls.get(f.call_id);
      span.end = Math.max(at, span.start + (f.execution_time_ms || 0)); span.ongoing = false;
      if (!f.success) span.failed = true;
    } else if (f.type === "interaction.requested") {
      calls.set(f.interaction_id, { kind: "ask", label: `asks: ${f.prompt}`, start: at, end: Math.max(now, last), depth: 2, seq: f.seq, ongoing: true });
      spans.push(calls.get(f.interaction_id));
    } else if (f.type === "interaction.answered" && calls.has(f.interaction_id)) {
      Object.assign(calls.get(f.interaction_id), { end: at, ongoing: false });
    }
  }
  for (const child of children) {
    const start = ms(child.created_at);
    const done = ["completed", "failed", "cancelled", "deleted"].includes(child.status);
    spans.push({ kind: "child", label: `child ${child.agent} ${child.id.slice(0, 8)} · ${child.status}`, start,
      end: done ? ms(child.updated_at) : Math.max(now, last), depth: 2, href: `#/runs/${child.id}`, ongoing: !done });
  }
  // each call and child under the step it falls in (by seq, or by time for children)
  for (const span of spans.filter((s) => s.depth === 2)) {
    const step = span.seq ? stepOf(span.seq) : stepSpans.find((s) => span.start >= s.start && span.start <= s.end + 1)
      || [...stepSpans].reverse().find((s) => s.start <= span.start);
    span.parent = step || null;
  }
  const ordered = [];
  const tops = spans.filter((s) => s.depth === 0);
  for (const top of [...tops, ...stepSpans].sort((a, b) => a.start - b.start || a.depth - b.depth)) {
    ordered.push(top);
    if (top.kind === "step") ordered.push(...spans.filter((s) => s.parent === top).sort((a, b) => a.start - b.start));
  }
  ordered.push(...spans.filter((s) => s.depth === 2 && !s.parent));
  return ordered;
}

function traceRow(span, t0, total) {
  const left = ((span.start - t0) / total) * 100;
  const width = Math.max(((span.end - span.start) / total) * 100, 0.25);
  const took = span.end - span.start;
  const metrics = [duration(took) + (span.ongoing ? "+" : "")];
  if (span.tokens) metrics.push(`${span.tokens} tok`);
  if (span.cost) metrics.push(`$${span.cost.toFixed(4)}`);
  const label = span.href ? el("a", { href: span.href }, span.label) : span.label;
  const text = `${span.label}: ${metrics.join(", ")}, from ${duration(span.start - t0)}`;
  return el("li", { class: `span ${span.kind}${span.failed ? " failed" : ""}`, "data-kind": span.kind,
    "data-depth": span.depth, "aria-label": text, title: text },
  el("span", { class: "label", style: `padding-left:${span.depth * 1.1}rem` }, label),
  el("span", { class: "metrics" }, metrics.join(" · ")),
  el("span", { class: "lane" }, el("span", { class: "bar", style: `left:${left}%;width:${Math.min(width, 100 - left)}%` })));
}

async function renderTrace() {
  const box = document.getElementById("trace");
  const runId = state.runId;
  if (!runId || !document.getElementById("trace-box").open) return;
  const [steps, children] = await Promise.all([
    api("GET", `/runs/${runId}/steps`).then((d) => d.steps).catch(() => []),
    api("GET", `/runs?parent_id=${encodeURIComponent(runId)}&limit=500`).then((d) => d.runs).catch(() => []),
  ]);
  if (runId !== state.runId) return;
  const now = Date.now();
  const spans = traceSpans(state.frames, steps, children, now);
  if (!spans.length) { box.replaceChildren(el("p", { class: "muted" }, "Nothing recorded yet.")); return; }
  const t0 = Math.min(...spans.map((s) => s.start));
  const total = Math.max(Math.max(...spans.map((s) => s.end)) - t0, 1);
  const axis = el("li", { class: "axis", "aria-hidden": "true" }, el("span", { class: "label" }, "what"),
    el("span", { class: "metrics" }, "took"),
    el("span", { class: "lane" }, ...[0, 0.25, 0.5, 0.75, 1].map((q) => el("span", { class: "tick", style: `left:${q * 100}%` }, duration(q * total)))));
  box.replaceChildren(el("ol", { class: "waterfall", tabindex: 0, "aria-label": `Trace of ${spans.length} spans over ${duration(total)}` },
    axis, ...spans.map((s) => traceRow(s, t0, total))));
}

let traceTimer = null;
function scheduleTrace() {
  if (traceTimer) return;
  traceTimer = setTimeout(() => { traceTimer = null; renderTrace(); }, 300);
}

function wireTrace() {
  document.getElementById("trace-box").addEventListener("toggle", scheduleTrace);
  document.addEventListener("frames-drawn", scheduleTrace);
}
