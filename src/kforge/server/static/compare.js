// Two runs side by side (a run and its fork, say): their answers, their sources and their
// frames aligned by seq, with what differs marked.
"use strict";

async function allFrames(runId) {
  const frames = [];
  let after = 0;
  for (;;) {
    const page = await api("GET", `/runs/${runId}/frames?after_seq=${after}&limit=5000`);
    frames.push(...page.frames);
    if (page.next_after_seq === null || !page.frames.length) return frames;
    after = page.next_after_seq;
  }
}

function answerOf(run) {
  if (run.text) return run.text;
  const r = run.result || {};
  return Object.keys(r).length ? JSON.stringify(r, null, 2) : "(no answer yet)";
}

function sourcesOf(run, frames) {
  const found = new Set();
  for (const s of run.sources || []) found.add(s);
  for (const s of (run.result || {}).sources || []) {
    found.add(typeof s === "string" ? s : s.file ? `${s.file}${s.location ? ` (${s.location})` : ""}` : JSON.stringify(s));
  }
  for (const f of frames) {
    if (f.type === "data.source.found") found.add(f.payload.file || f.payload.title || JSON.stringify(f.payload));
  }
  return found;
}

function runCard(run, frames) {
  return el("div", { class: "card" },
    el("h3", {}, el("a", { href: `#/runs/${run.id}` }, `${run.agent} ${run.id.slice(0, 8)}`), " ",
      el("span", { class: `badge ${run.status}` }, run.status)),
    el("p", { class: "muted" }, `${run.steps} steps · ${frames.length} frames${run.forked_from ? ` · forked from ${run.forked_from.slice(0, 8)} at seq ${run.forked_at_seq}` : ""}`));
}

function sourceList(mine, theirs) {
  const list = el("ul", { class: "sources" });
  for (const s of [...mine].sort()) list.append(el("li", { class: theirs.has(s) ? "same" : "differ" }, s));
  if (!mine.size) list.append(el("li", { class: "muted" }, "no sources"));
  return list;
}

function frameCell(frame) {
  if (!frame) return el("td", { class: "none" }, "—");
  return el("td", {}, el("span", { class: "type" }, frame.type), " ", describe(frame));
}

async function openCompare(leftId, rightId) {
  closeStreams();
  state.runId = null;
  $("run").hidden = true; $("empty").hidden = true; $("compare").hidden = false;
  $("compare-body").replaceChildren(el("p", { class: "muted" }, "Reading both runs…"));
  const data = await guarded(() => Promise.all([
    api("GET", `/runs/${leftId}`), api("GET", `/runs/${rightId}`), allFrames(leftId), allFrames(rightId),
  ]));
  if (!data) return;
  const [left, right, leftFrames, rightFrames] = data;
  const answers = [answerOf(left), answerOf(right)];
  const sources = [sourcesOf(left, leftFrames), sourcesOf(right, rightFrames)];
  const rows = [];
  let differ = 0;
  for (let i = 0; i < Math.max(leftFrames.length, rightFrames.length); i += 1) {
    const a = leftFrames[i], b = rightFrames[i];
    const same = a && b && a.type === b.type && describe(a) === describe(b);
    if (!same) differ += 1;
    rows.push(el("tr", { class: same ? "same" : "differ", "data-seq": (a || b).seq },
      el("th", { scope: "row" }, (a || b).seq), frameCell(a), frameCell(b)));
  }
  const table = el("table", { class: "compare-frames" },
    el("thead", {}, el("tr", {}, el("th", { scope: "col" }, "seq"),
      el("th", { scope: "col" }, left.id.slice(0, 8)), el("th", { scope: "col" }, right.id.slice(0, 8)))),
    el("tbody", {}, ...rows));
  const onlyDiff = el("input", { type: "checkbox", id: "compare-only-diff" });
  onlyDiff.addEventListener("change", () => table.classList.toggle("only-diff", onlyDiff.checked));
  const sameAnswer = answers[0] === answers[1];
  $("compare-body").replaceChildren(
    el("div", { class: "columns" }, runCard(left, leftFrames), runCard(right, rightFrames)),
    el("h3", {}, "Answers ", el("span", { id: "compare-answer-verdict", class: `badge ${sameAnswer ? "completed" : "failed"}` }, sameAnswer ? "the same" : "they differ")),
    el("div", { class: "columns" },
      ...answers.map((text, i) => {
        const box = el("div", { class: `report answer${sameAnswer ? "" : " differ"}`, "data-side": i ? "right" : "left" });
        if (text.startsWith("{")) box.append(el("pre", {}, text)); else box.innerHTML = markdown(text);
        return box;
      })),
    el("h3", {}, "Sources"),
    el("div", { class: "columns" }, sourceList(sources[0], sources[1]), sourceList(sources[1], sources[0])),
    el("h3", {}, "Frames ", el("span", { id: "compare-frame-count", class: "muted" }, `${differ} of ${rows.length} differ`)),
    el("label", { class: "check", for: "compare-only-diff" }, onlyDiff, "Show only the frames that differ"),
    table);
  $("compare-title").focus();
}

function wireCompare() {
  $("compare-with-source").addEventListener("click", () => {
    const run = state.run;
    if (run && run.forked_from) location.hash = `#/compare/${run.forked_from}/${run.id}`;
  });
  $("compare-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const other = $("compare-other").value.trim();
    if (other && state.runId) location.hash = `#/compare/${state.runId}/${other}`;
  });
}
