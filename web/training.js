// canrun Space: the training view. The training checks' rows (canrun check --runner torch
// --workload train) of every version pair, each with its loss curve against the reference, and
// a detail with the curve at full size, the verdict's numbers and the row's reproduce script.
// Uses el, badge, section, copyButton, seconds and bytes from app.js.
"use strict";

const SVG = "http://www.w3.org/2000/svg";

function svgEl(tag, attrs = {}) {
  const node = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, String(value));
  return node;
}

// The row's losses per step (solid) over the reference's (dashed), on one scale; with axes and
// labels when large.
function lossCurve(row, width, height, large) {
  const tested = row.train_losses || [];
  const reference = row.reference_losses || [];
  const all = tested.concat(reference).filter((v) => Number.isFinite(v));
  const svg = svgEl("svg", { width, height, viewBox: `0 0 ${width} ${height}`, class: "loss-curve", role: "img" });
  const label = `Loss per step: ${tested.length} steps, from ${tested[0]?.toFixed(4)} to ` +
    `${tested[tested.length - 1]?.toFixed(4)}; the reference from ${reference[0]?.toFixed(4)} to ` +
    `${reference[reference.length - 1]?.toFixed(4)}`;
  svg.setAttribute("aria-label", label);
  const title = svgEl("title");
  title.textContent = label;
  svg.append(title);
  if (!all.length) return svg;
  const pad = large ? { left: 56, right: 12, top: 12, bottom: 28 } : { left: 2, right: 2, top: 2, bottom: 2 };
  const low = Math.min(...all), high = Math.max(...all);
  const span = high - low || Math.abs(high) || 1;
  const steps = Math.max(tested.length, reference.length);
  const x = (i) => pad.left + (steps > 1 ? i / (steps - 1) : 0.5) * (width - pad.left - pad.right);
  const y = (v) => pad.top + (1 - (v - low) / span) * (height - pad.top - pad.bottom);
  const path = (values) => values.map((v, i) => `${i ? "L" : "M"}${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(" ");
  if (large) {
    for (const [value, anchor] of [[high, "hanging"], [low, "auto"]]) {
      const text = svgEl("text", { x: pad.left - 6, y: y(value), "text-anchor": "end", "dominant-baseline": anchor, class: "axis" });
      text.textContent = value.toFixed(4);
      svg.append(text);
    }
    const axis = svgEl("text", { x: (pad.left + width - pad.right) / 2, y: height - 6, "text-anchor": "middle", class: "axis" });
    axis.textContent = `step (0 to ${steps - 1})`;
    svg.append(svgEl("line", { x1: pad.left, y1: pad.top, x2: pad.left, y2: height - pad.bottom, class: "axis-line" }),
      svgEl("line", { x1: pad.left, y1: height - pad.bottom, x2: width - pad.right, y2: height - pad.bottom, class: "axis-line" }),
      axis);
  }
  if (reference.length) svg.append(svgEl("path", { d: path(reference), class: "loss-reference" }));
  if (tested.length) svg.append(svgEl("path", { d: path(tested), class: "loss-tested" }));
  return svg;
}

// The component of the row's software stack, e.g. its dtype or training setup.
const stackPart = (row, name) => (row.software_stack.find((c) => c.component === name) || {}).version;

function finalLoss(row) {
  const losses = row.train_losses;
  if (!losses || !losses.length) return DASH;
  const last = losses[losses.length - 1];
  const ref = row.reference_losses && row.reference_losses[losses.length - 1];
  return ref == null ? last.toFixed(4) : `${last.toFixed(4)} (reference ${ref.toFixed(4)})`;
}

function trainingRowElement(row) {
  const open = el("button", { type: "button", class: "link", text: row.model_id });
  open.addEventListener("click", () => openTrainingDetail(row));
  const curve = row.train_losses ? lossCurve(row, 120, 28, false) : el("span", { text: DASH });
  return el("tr", {},
    el("th", { scope: "row" }, open),
    el("td", { text: `${row.pair.compiler} / ${row.pair.library}` }),
    el("td", { text: stackPart(row, "dtype") || DASH }),
    el("td", {}, badge(row)),
    el("td", { class: "num", text: row.train_steps ?? DASH }),
    el("td", { class: "num", text: finalLoss(row) }),
    el("td", { class: "num", text: row.step_time_p50_s != null ? seconds(row.step_time_p50_s) : DASH }),
    el("td", { class: "num", text: row.train_tokens_per_s != null ? row.train_tokens_per_s.toFixed(1) : DASH }),
    el("td", { text: row.restart_check || DASH }),
    el("td", { class: "curve" }, curve));
}

let trainingRequest = null;
async function loadTraining(task) {
  if (trainingRequest) trainingRequest.abort();
  trainingRequest = new AbortController();
  let body;
  try {
    body = await getJson(`/api/training?${new URLSearchParams({ task })}`, trainingRequest.signal);
  } catch (error) {
    if (error.name === "AbortError") return;
    $("training-status").textContent = `Could not load the training rows: ${error.message}`;
    return;
  }
  $("training-rows").tBodies[0].replaceChildren(...body.rows.map(trainingRowElement));
  $("training-status").textContent = body.rows.length
    ? `${body.rows.length} training check${body.rows.length === 1 ? "" : "s"} of ${task} · dataset loaded ${body.dataset.loaded_at}`
    : `No training checks of ${task} yet: canrun check MODEL --runner torch --workload train records one.`;
  showDatasetErrors(body.dataset);
}

function trainingFacts(row) {
  const facts = el("dl");
  const fact = (term, value, id = null) => {
    if (value !== null && value !== undefined && value !== "") facts.append(el("dt", { text: term }), el("dd", { id, text: String(value) }));
  };
  fact("Version pair", `${row.pair.compiler} / ${row.pair.library}`);
  fact("Setup", stackPart(row, "training"), "training-setup");
  fact("Device", stackPart(row, "device"));
  fact("Compute dtype", stackPart(row, "dtype"));
  fact("Compile", stackPart(row, "compile"));
  fact("Weights", row.weights);
  fact("Steps", row.train_steps);
  fact("Final loss", finalLoss(row), "training-final-loss");
  if (row.loss_tolerance != null) fact("Tolerance after step 0", `${row.loss_tolerance} relative to the reference's loss`);
  if (row.first_step_outside != null) fact("First step outside its tolerance", row.first_step_outside);
  if (row.native_step0_loss != null)
    fact("Step 0's loss on canrun's own engine", `${row.native_step0_loss.toFixed(6)} (the reference's ${row.reference_losses[0].toFixed(6)})`, "training-native");
  if (row.restart_check) fact(`Restart from step ${row.restart_step}'s checkpoint`, row.restart_check, "training-restart");
  fact("First step (compiling, warming up)", seconds(row.first_step_time_s));
  if (row.step_time_p50_s != null) fact("Steady step time", `p50 ${seconds(row.step_time_p50_s)}, p95 ${seconds(row.step_time_p95_s)}`);
  if (row.train_tokens_per_s != null) fact("Tokens per second", row.train_tokens_per_s.toFixed(1));
  fact("Peak host memory", bytes(row.peak_host_memory_bytes));
  fact("Peak device memory", bytes(row.peak_device_memory_bytes));
  fact("Checked at", row.timestamp);
  fact("Host", row.host);
  return facts;
}

function openTrainingDetail(row) {
  const parts = [el("p", { id: "detail-result" }, badge(row), " ",
    el("span", { text: row.result === "PASS" ? "Every loss within its tolerance of the reference's, and the restart repeats the run." : row.error_message || "" }))];
  if (row.train_losses)
    parts.push(...section("Loss per step", el("figure", { id: "training-curve" }, lossCurve(row, 560, 220, true),
      el("figcaption", { class: "note", text: "Solid: the tested stack. Dashed: the reference, torch's cpu in float32, eager, the same steps." }))));
  parts.push(trainingFacts(row));
  if (row.error_message && row.result !== "PASS")
    parts.push(...section("Error", el("pre", { id: "detail-error", text: row.error_message })));
  parts.push(...section("Training data", el("pre", { id: "detail-prompt", text: row.prompt })));
  if (row.run_command)
    parts.push(...section("Run it yourself", el("div", { class: "command" }, el("pre", {}, el("code", { id: "detail-run", text: row.run_command })),
      copyButton(row.run_command, "Copy command"))));
  const stack = el("table", { id: "detail-stack" },
    el("thead", {}, el("tr", {}, el("th", { scope: "col", text: "Component" }), el("th", { scope: "col", text: "Version" }))),
    el("tbody", {}, ...row.software_stack.map((c) => el("tr", {}, el("td", { text: c.component }), el("td", { text: c.version })))));
  parts.push(...section("Software stack", stack));
  parts.push(...section("Reproduce script", el("pre", { id: "detail-script", text: row.reproduce_script }),
    copyButton(row.reproduce_script, "Copy script")));
  lastFocus = document.activeElement;
  $("detail-title").textContent = `${row.model_id} · training`;
  $("detail-body").replaceChildren(...parts);
  if (!$("detail").open) $("detail").showModal();
}
