// A step of the run looked at closely: the state after the step that committed a chosen frame,
// what that step changed, and a fork of the run from that frame.
"use strict";

function pathText(path) {
  return path.length ? path.map((k) => (typeof k === "number" ? `[${k}]` : k)).join(".").replace(/\.\[/g, "[") : "(the whole state)";
}

function shortJson(value) {
  if (value === undefined || value === null) return String(value);
  const text = JSON.stringify(value);
  return text.length > 240 ? `${text.slice(0, 240)}…` : text;
}

function changeItem(change) {
  const path = el("code", { class: "path" }, pathText(change.path));
  if (change.op === "append") {
    const n = Array.isArray(change.after) ? change.after.length : 1;
    return el("li", { class: "change append", "data-path": pathText(change.path) }, path,
      ` + ${n} item${n === 1 ? "" : "s"}: `, el("ins", {}, shortJson(change.after)));
  }
  if (change.op === "delete") {
    return el("li", { class: "change delete", "data-path": pathText(change.path) }, path, " removed: ", el("del", {}, shortJson(change.before)));
  }
  return el("li", { class: "change set", "data-path": pathText(change.path) }, path, ": ",
    el("del", {}, shortJson(change.before)), " → ", el("ins", {}, shortJson(change.after)));
}

async function inspectFrame(frame) {
  const runId = frame.run_id || state.runId;
  for (const row of document.querySelectorAll("#timeline li.selected")) row.classList.remove("selected");
  const row = document.querySelector(`#timeline li[data-seq="${frame.seq}"][data-run="${CSS.escape(runId)}"]`);
  if (row) row.classList.add("selected");
  const view = await guarded(() => api("GET", `/runs/${runId}/state?seq=${frame.seq}`));
  if (!view) return;
  const box = $("inspect");
  box.hidden = false;
  box.dataset.run = runId; box.dataset.seq = frame.seq;
  $("inspect-title").textContent = `State after step ${view.step}`;
  $("inspect-summary").textContent = `Frame ${frame.seq} (${frame.type}) belongs to step ${view.step}, frames ${view.first_seq}–${view.seq}${runId !== state.runId ? ` of agent ${runId.slice(0, 8)}` : ""}. What the step changed:`;
  const diff = $("diff");
  diff.replaceChildren(...view.changes.map(changeItem));
  if (!view.changes.length) diff.append(el("li", { class: "muted" }, "nothing: the state is as the step before left it"));
  $("state-json").textContent = JSON.stringify(view.state, null, 2);
  $("fork-seq").value = frame.seq;
  $("fork-seq").max = state.seqs[runId] || frame.seq;  // the last seq seen of that run
  $("fork-source").textContent = runId.slice(0, 8);
  box.scrollIntoView({ block: "nearest" });
  $("inspect-title").focus();
}

// The fork of the inspected run at the chosen seq, with its limits; it runs at once when asked.
async function forkFromStep(event) {
  event.preventDefault();
  const box = $("inspect");
  const source = box.dataset.run;
  const limits = {};
  for (const [field, name] of [["fork-max-steps", "max_steps"], ["fork-max-tokens", "max_tokens"], ["fork-max-time", "max_wall_time_s"]]) {
    if ($(field).value) limits[name] = Number($(field).value);
  }
  const fork = await guarded(async () => {
    const made = await api("POST", `/runs/${source}/fork`, { at_seq: Number($("fork-seq").value) });
    if ($("fork-run").checked && made.status === "paused") {
      return api("POST", `/runs/${made.id}/resume`, Object.keys(limits).length ? limits : undefined);
    }
    return made;
  });
  if (fork) location.hash = `#/runs/${fork.id}`;
}

function wireInspect() {
  document.addEventListener("frame-picked", (e) => inspectFrame(e.detail));
  $("fork-form").addEventListener("submit", forkFromStep);
  $("inspect-close").addEventListener("click", closeInspect);
}

function closeInspect() {
  $("inspect").hidden = true;
  for (const row of document.querySelectorAll("#timeline li.selected")) row.classList.remove("selected");
}
