// canrun Space: the page's behaviour. Plain JavaScript over the JSON API; state lives in the URL
// hash so a view can be shared and the back button works.
"use strict";

const PAGE_SIZE = 500;
const TASKS = ["text-generation", "image-text-to-text", "sentence-similarity", "feature-extraction", "text-ranking",
  "text-classification"];
// Tasks of encoders: their checks compare embeddings or scores, not generated tokens.
const ENCODER_TASKS = TASKS.slice(2);
const VIEWS = ["selected", "trending", "downloads", "tested", "compare", "training"];
const DEFAULTS = {
  view: "selected", task: TASKS[0], q: "", compiler: "", library: "", sort: "rank", order: "asc",
  from: "", to: "", all: "",
};
const state = { ...DEFAULTS };
let pairs = [];
let listRequest = null;
const $ = (id) => document.getElementById(id);

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (key === "text") node.textContent = value;
    else if (value !== null && value !== undefined && value !== false) node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children) if (child !== null && child !== undefined) node.append(child);
  return node;
}

function bytes(value) {
  if (value === null || value === undefined) return null;
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let amount = value, unit = 0;
  while (amount >= 1024 && unit < units.length - 1) { amount /= 1024; unit += 1; }
  return `${amount.toFixed(unit === 0 ? 0 : 1)} ${units[unit]}`;
}

function seconds(value) {
  if (value === null || value === undefined) return null;
  return value < 10 ? `${value.toFixed(2)} s` : value < 600 ? `${value.toFixed(1)} s` : `${(value / 60).toFixed(1)} min`;
}

// What each result means, in the order of the legend. `cls` picks the badge's look (colour,
// border and symbol), so that no two kinds of result look alike.
const FAILURES = ["FAIL_LOAD", "FAIL_COMPILE", "FAIL_RUNTIME", "FAIL_MISMATCH", "FAIL_JUDGE", "TIMEOUT", "OOM"];
const SYNTHETIC = "Synthetic weights: random weights (canrun's fixed seed) at the model's real config, " +
  "since no published weights were used. A PASS on them shows the model runs here and matches the reference " +
  "token for token; the quality of the text is not judged (random weights write no sensible text).";
const LEGEND = [
  { cls: "pass", sample: { result: "PASS", weights: "real" },
    text: "Real weights: the compiled cpu backend's 32 greedy tokens equal the f32 ref reference's, token for token " +
      "(an encoder: its embeddings or scores agree with the reference's; see the note below)." },
  { cls: "pass synthetic", sample: { result: "PASS", weights: "synthetic" },
    text: "Synthetic weights: runs and matches the reference; text quality not judged (random weights at the " +
      "model's real config)." },
  { cls: "near", sample: { result: "PASS_TOP5" }, also: { result: "PASS_JUDGE" },
    text: "Tokens differ, but each is in the other's top 5 at the first difference (TOP5), or the judge model " +
      "scores the text fluent (JUDGE)." },
  { cls: "not-tested", sample: { result: "NOT_TESTED", reason_code: "needs_memory" },
    text: "Deliberately not run; the code says why (needs_memory, cannot_shard, weights_unavailable). Neither " +
      "pass nor failure: no cores, weights or time." },
  { cls: "untested", sample: null, text: "No row yet: not checked on this version pair." },
  { cls: "fail", sample: { result: "FAIL_RUNTIME" }, text: `Ran and failed: ${FAILURES.join(", ")}.` },
  { cls: "unsupported", sample: { result: "UNSUPPORTED_ARCHITECTURE" },
    text: "canrun has no implementation of this model_type yet; nothing ran." },
  { cls: "excluded", sample: { result: "EXCLUDED" }, text: "Left out by the catalog, with its reason; nothing ran." },
];
const MARKS = { pass: "✓", near: "≈", fail: "✗", "not-tested": "⊘", untested: "○", unsupported: "◇", excluded: "–" };

function statusClass(result) {
  if (!result) return "untested";
  if (result === "PASS") return "pass";
  if (result === "PASS_TOP5" || result === "PASS_JUDGE") return "near";
  if (result === "NOT_TESTED") return "not-tested";
  if (result === "UNSUPPORTED_ARCHITECTURE") return "unsupported";
  if (result === "EXCLUDED") return "excluded";
  return "fail";
}

// Statuses of a check that ran nothing: no cores, weights, time or memory are shown for them,
// whatever the row holds (an older canrun wrote the planner's cores and a wall time there).
const RAN_NOTHING = new Set(["NOT_TESTED", "UNSUPPORTED_ARCHITECTURE", "EXCLUDED"]);
const ran = (row) => Boolean(row && row.result && !RAN_NOTHING.has(row.result));

// The badge of a row (null: no row): colour, border and symbol by kind of result, the status
// name, "synthetic" on a pass on synthetic weights, and the reason code of a NOT_TESTED row.
function badge(row) {
  const result = row ? row.result : null;
  const kind = statusClass(result);
  const synthetic = kind === "pass" && row.weights === "synthetic";
  const node = el("span", { class: `badge ${kind}${synthetic ? " synthetic" : ""}`, "data-result": result || "UNTESTED",
    title: synthetic ? SYNTHETIC : null }, `${MARKS[kind]} ${result || "UNTESTED"}`);
  if (synthetic) node.append(" ", el("span", { class: "qualifier", text: "synthetic" }));
  if (kind === "not-tested" && row.reason_code) node.append(" ", el("code", { class: "reason-code", text: row.reason_code }));
  return node;
}

function legend() {
  const items = LEGEND.map((entry) => {
    const badges = [badge(entry.sample)];
    if (entry.also) badges.push(" ", badge(entry.also));
    return el("li", { "data-kind": entry.cls.split(" ").join("-") },
      el("span", { class: "legend-badges" }, ...badges), el("span", { class: "legend-text", text: entry.text }));
  });
  $("legend-list").replaceChildren(...items);
}

async function getJson(url, signal) {
  const response = await fetch(url, { signal });
  const body = await response.json();
  if (!response.ok) throw new Error(body.error || `HTTP ${response.status}`);
  return body;
}

function readHash() {
  const params = new URLSearchParams(location.hash.slice(1));
  for (const key of Object.keys(DEFAULTS)) state[key] = params.get(key) ?? DEFAULTS[key];
  if (!VIEWS.includes(state.view)) state.view = "selected";
  if (!TASKS.includes(state.task)) state.task = TASKS[0];
}

function writeHash() {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(state)) if (value) params.set(key, value);
  history.replaceState(null, "", `#${params}`);
}

function fillSelect(select, values, chosen, label = (v) => v) {
  select.replaceChildren(...values.map((v) => el("option", { value: v, text: label(v) })));
  select.value = values.includes(chosen) ? chosen : values[0] || "";
}

function syncVersionSelectors() {
  const compilers = [...new Set(pairs.map((p) => p.compiler))];
  if (!compilers.includes(state.compiler)) state.compiler = compilers[0] || "";
  const libraries = pairs.filter((p) => p.compiler === state.compiler).map((p) => p.library);
  if (!libraries.includes(state.library)) state.library = libraries[0] || "";
  fillSelect($("compiler"), compilers, state.compiler);
  fillSelect($("library"), libraries, state.library);
  $("compiler").disabled = $("library").disabled = compilers.length === 0;
}

function syncControls() {
  for (const tab of document.querySelectorAll("[role=tab]")) {
    const active = tab.dataset.view === state.view;
    tab.setAttribute("aria-selected", String(active));
    tab.tabIndex = active ? 0 : -1;
    if (active && tab.getAttribute("aria-controls") === "results") $("results").setAttribute("aria-labelledby", tab.id);
  }
  $("task").value = state.task;
  if ($("search").value !== state.q) $("search").value = state.q;
  $("sort").value = state.sort;
  $("order").value = state.order;
  for (const th of document.querySelectorAll("th[data-sort]")) {
    th.setAttribute("aria-sort", th.dataset.sort === state.sort ? (state.order === "desc" ? "descending" : "ascending") : "none");
  }
}

const DASH = "—";

// The cores a check ran on; a dash where nothing ran. The planner's count for a model not run
// is in its detail, labelled as a plan, never in this column.
function coresCell(row) {
  return el("td", { class: "num", "data-label": "Cores", text: ran(row) && row.cores != null ? row.cores : DASH });
}

// A torch.compile run that captured nothing, or broke its graphs, says so next to its result.
function compileNote(row) {
  if (row.eager_fallback) return "ran eagerly: torch.compile captured no graph";
  if (row.graph_breaks) return `${row.graph_breaks} graph break${row.graph_breaks === 1 ? "" : "s"}`;
  return null;
}

// Under the model id: its architecture, its quantization and the weights' licence (the weights' own terms, apart
// from canrun's).
function modelNote(row) {
  const parts = [row.yours ? "yours" : null, row.architecture, row.quantization,
                 row.license ? `licence ${row.license}` : null]
    .filter(Boolean);
  return parts.length ? el("span", { class: "sub model-note", text: parts.join(" · ") }) : null;
}

// An encoder check's agreement with the reference: the smallest cosine similarity of an embedding,
// or a ranker's largest score difference.
function agreementCell(row) {
  let text = DASH;
  if (row.min_cosine != null) text = `cos ≥ ${row.min_cosine.toFixed(6)}`;
  else if (row.max_score_difference != null) text = `Δ ≤ ${row.max_score_difference.toExponential(1)}`;
  return el("td", { class: "num encoder-col", "data-label": "Agreement", text });
}

const listed = new Map();  // model id -> its row of the last list answer (the planner's view for the detail)

function rowElement(row) {
  listed.set(row.model_id, row);
  const open = () => openDetail(row.model_id);
  const name = el("button", { type: "button", class: "model", text: row.model_id, "aria-haspopup": "dialog" });
  name.addEventListener("click", (event) => { event.stopPropagation(); open(); });
  const resultCell = el("td", { "data-label": "Result" }, badge(row.result ? row : null));
  const compiled = compileNote(row);
  if (compiled) resultCell.append(el("span", { class: "sub compile-note", text: compiled }));
  if (row.verification) resultCell.append(el("span", { class: "sub", text: `verified: ${row.verification}` }));
  if (row.reason) resultCell.append(el("span", { class: "sub reason", text: row.reason }));
  const didRun = ran(row);
  const memoryCell = el("td", { class: "num", "data-label": "Peak device memory" });
  const memory = didRun ? bytes(row.peak_device_memory_bytes) : null;
  if (memory) memoryCell.textContent = memory;
  else {
    memoryCell.append(el("span", { text: DASH, title: didRun ? "not measured on this backend" : "nothing ran" }));
    const host = didRun ? bytes(row.peak_host_memory_bytes) : null;
    if (host) memoryCell.append(el("span", { class: "sub", text: `host ${host}` }));
  }
  const tr = el("tr", { "data-model": row.model_id },
    el("td", { class: "num", "data-label": "Rank", text: row.rank ?? "" }),
    el("td", { "data-label": "Model" }, name, modelNote(row)),
    resultCell,
    coresCell(row),
    el("td", { class: "num", "data-label": "Wall time", text: (didRun && seconds(row.wall_time_s)) || DASH }),
    memoryCell,
    el("td", { "data-label": "Weights", text: (didRun && row.weights) || DASH }),
    agreementCell(row),
    el("td", { class: "num encoder-col", "data-label": "Sentences/s",
      text: row.sentences_per_s != null ? row.sentences_per_s.toFixed(1) : DASH }));
  tr.addEventListener("click", open);
  return tr;
}

function showDatasetErrors(dataset) {
  const box = $("dataset-errors");
  box.hidden = !dataset.errors.length;
  box.textContent = dataset.errors.length ? `Some dataset files could not be read (their last good rows are shown): ${dataset.errors.join("; ")}` : "";
}

const pairName = (p) => `${p.compiler}__${p.library}`;

// The compare view's pairs: by default the second newest against the newest.
function syncComparePairs() {
  const names = pairs.map(pairName);
  if (!names.includes(state.to)) state.to = names[0] || "";
  if (!names.includes(state.from)) state.from = names[1] || names[0] || "";
  const label = (name) => name.replace("__", " / ");
  fillSelect($("compare-from"), names, state.from, label);
  fillSelect($("compare-to"), names, state.to, label);
  $("compare-all").checked = state.all === "1";
}

const resultOf = (row) => (row ? badge(row) : el("span", { text: "no row" }));

function diffElement(model) {
  const newer = model.to || model.from;
  const error = (model.to && model.to.error_message) || (model.from && model.from.error_message) || "";
  return el("tr", { "data-model": model.model_id, class: model.regression ? "regression" : null },
    el("td", { "data-label": "Model", text: model.model_id }),
    el("td", { "data-label": "Task", text: newer.task }),
    el("td", { "data-label": "From" }, resultOf(model.from)),
    el("td", { "data-label": "To" }, resultOf(model.to)),
    el("td", { "data-label": "Changes", text: model.changes.length ? model.changes.join("; ") : "unchanged" }),
    el("td", { "data-label": "Error", class: "error", text: error.slice(0, 200) }));
}

async function loadDiff() {
  syncComparePairs();
  writeHash();
  if (listRequest) listRequest.abort();
  listRequest = new AbortController();
  if (!state.from || !state.to) {
    $("compare-status").textContent = "No dataset files yet.";
    return;
  }
  const params = new URLSearchParams({ from: state.from, to: state.to, all: state.all === "1" ? "1" : "0" });
  let body;
  try {
    body = await getJson(`/api/diff?${params}`, listRequest.signal);
  } catch (error) {
    if (error.name === "AbortError") return;
    $("compare-status").textContent = `Could not compare: ${error.message}`;
    return;
  }
  $("diff-rows").tBodies[0].replaceChildren(...body.models.map(diffElement));
  const c = body.counts;
  $("compare-status").textContent = `${c.models} models · ${c.changed} changed · ` +
    `${c.regressions} regression${c.regressions === 1 ? "" : "s"} · ` +
    `generated tokens agree on ${c.tokens_agree} of ${c.tokens_compared} compared`;
  showDatasetErrors(body.dataset);
}

async function loadRows() {
  const comparing = state.view === "compare";
  const training = state.view === "training";
  $("compare").hidden = !comparing;
  $("training").hidden = !training;
  for (const id of ["results", "ranking", "status"]) $(id).hidden = comparing || training;
  $("controls").hidden = comparing;
  if (comparing) {
    syncControls();
    return loadDiff();
  }
  if (training) {
    writeHash();
    syncControls();
    return loadTraining(state.task);
  }
  writeHash();
  syncControls();
  if (listRequest) listRequest.abort();
  listRequest = new AbortController();
  const params = new URLSearchParams({ view: state.view, task: state.task, sort: state.sort, order: state.order, limit: PAGE_SIZE });
  if (state.q) params.set("q", state.q);
  if (state.compiler) params.set("compiler", state.compiler);
  if (state.library) params.set("library", state.library);
  let body;
  try {
    body = await getJson(`/api/rows?${params}`, listRequest.signal);
  } catch (error) {
    if (error.name === "AbortError") return;
    $("status").textContent = `Could not load the rows: ${error.message}`;
    return;
  }
  $("rows").classList.toggle("encoder-task", ENCODER_TASKS.includes(state.task));
  $("rows").tBodies[0].replaceChildren(...body.rows.map(rowElement));
  const ranking = body.ranking;
  $("ranking").textContent = ranking.note
    ? ranking.note
    : `Ranked by ${ranking.signal} within ${body.task}, as of ${ranking.as_of} (source: ${ranking.source}).`;
  const pair = body.pair ? `${body.pair.compiler} / ${body.pair.library}` : "no dataset yet";
  const shown = body.rows.length < body.total ? `Showing ${body.rows.length} of ${body.total} models (refine the search)` : `${body.total} models`;
  $("status").textContent = `${shown} · ${pair} · dataset loaded ${body.dataset.loaded_at}`;
  showDatasetErrors(body.dataset);
}

function section(title, ...content) {
  return [el("h3", { text: title }), ...content];
}

function copyButton(text, label) {
  const button = el("button", { type: "button", class: "action", text: label });
  button.addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(text);
      button.textContent = "Copied";
    } catch {
      button.textContent = "Copy failed: select the text";
    }
    setTimeout(() => { button.textContent = label; }, 2000);
  });
  return button;
}

const plural = (count, word) => `${count} ${word}${count === 1 ? "" : "s"}`;

// One line under the badge: what the row says, in words.
function resultSummary(row, detail) {
  if (!row) return detail.untested_reason || "No row for this model on this version pair.";
  if (!ran(row)) {
    const why = row.reason_code ? ` (${row.reason_code})` : "";
    return `Nothing ran${why}: no cores, weights or time to show.`;
  }
  const where = row.cores != null ? ` on ${plural(row.cores, "core")}` : "";
  const weights = row.weights ? `, ${row.weights} weights` : "";
  return `${row.result}${where}${weights}.`;
}

// The first generated token that differs from the reference's. The row's
// first_divergence_step when it has that field (null: equal, or nothing compared); for a row
// written before it, read from the row's two token lists.
function divergence(row) {
  const tested = row.generated_token_ids, reference = row.reference_token_ids;
  const compared = row.tokens_match != null || (Array.isArray(tested) && Array.isArray(reference));
  let step = row.first_divergence_step;
  // Rows from before tokens_match existed carry neither field: the token lists tell.
  if (row.tokens_match == null && compared && Array.isArray(tested) && Array.isArray(reference)) {
    step = null;
    const length = Math.max(tested.length, reference.length);
    for (let i = 0; i < length; i += 1) if (tested[i] !== reference[i]) { step = i; break; }
  }
  if (step != null) {
    const at = (list) => (Array.isArray(list) && step < list.length ? list[step] : "none");
    const tokens = Array.isArray(tested) ? ` (tested token ${at(tested)}, reference ${at(reference)})` : "";
    return `step ${step}: the first ${plural(step, "token")} equal the reference${tokens}`;
  }
  if (row.tokens_match === false) return "the tokens differ from the reference";
  if (compared) return "none: every token equals the reference";
  return ran(row) ? "not compared: the check stopped before both runs generated" : "not compared: nothing ran";
}

// An encoder row's agreement with the ref reference, in words.
function encoderAgreement(row) {
  const rate = row.sentences_per_s != null ? `; the tested run encoded ${row.sentences_per_s.toFixed(1)} texts/s` : "";
  if (row.min_cosine != null)
    return `smallest cosine similarity of a tested embedding with the reference's: ${row.min_cosine.toFixed(9)}` +
      ` (PASS at 0.99999, 0.999 for bf16 weights)${rate}`;
  if (row.max_score_difference != null)
    return `largest score difference from the reference: ${row.max_score_difference.toExponential(2)}` +
      ` (PASS within 1e-4, documents in the same order)${rate}`;
  return ran(row) ? "not compared: the check stopped before both runs encoded" : "not compared: nothing ran";
}

function generatedText(row) {
  if (row.generated_text != null) return { title: "Generated text", text: row.generated_text };
  if (Array.isArray(row.generated_token_ids))
    return { title: "Generated token ids (no text: synthetic weights have no tokenizer)",
      text: row.generated_token_ids.join(" ") };
  return { title: "Generated text", text: ran(row) ? "Nothing was generated." : "Nothing was generated: the check did not run." };
}

const PLAN_SOURCES = {
  built: "built: compiled during the check",
  local_cache: "loaded from this machine's plan cache",
  remote_cache: "pulled from a remote plan cache (canrun cache pull)",
};

// Set-up in a fresh clone: the first two steps of scripts/main.sh (which then also serves this page).
const SETUP = "bash scripts/install_deps.sh && BUILD_TARGETS=canrun bash scripts/build.sh build";

// The command that checks the model as the row did: the row's run_command, or for a catalog model
// without a row the check of its catalog config on synthetic weights.
function runCommand(row, detail) {
  if (row && row.run_command) return { command: row.run_command, note: null };
  if (detail.catalog && (!row || row.weights !== "real"))
    return { command: `build/canrun check ${detail.model_id} --synthetic`,
      note: row ? "This row carries no run command (an older canrun wrote it): this is the check of the catalog's " +
        "config on synthetic weights. The reproduce script below reruns the row exactly."
        : "No row yet: this checks the catalog's config on synthetic weights; without --synthetic it checks the " +
          "real weights (from the Hugging Face cache, downloaded when missing)." };
  return { command: null, note: "This row carries no run command (an older canrun wrote it): the reproduce script " +
    "below reruns it." };
}

function runSection(row, detail) {
  const run = runCommand(row, detail);
  const parts = [el("p", { class: "note", text: "Once, in a fresh clone of canrun: install the dependencies and build " +
      "build/canrun (the first steps of bash scripts/main.sh, which then also serves this page)." }),
    el("div", { class: "command" }, el("pre", {}, el("code", { id: "detail-run-setup", text: SETUP })),
      copyButton(SETUP, "Copy set-up"))];
  if (run.command) {
    parts.push(el("p", { class: "note", text: "Then the check (it prints the row and records it in your results folder, results/ unless $CANRUN_RESULTS names another, which this page shows beside the shipped rows, marked yours):" }),
      el("div", { class: "command" }, el("pre", {}, el("code", { id: "detail-run", text: run.command })),
        copyButton(run.command, "Copy command")));
  }
  if (run.note) parts.push(el("p", { class: "note", text: run.note }));
  return section("Run it yourself", ...parts);
}

function planCacheSection(row, detail) {
  const cache = detail.plan_cache;
  if (!cache.available) return section("Plan cache", el("p", { class: "note", text: cache.note }));
  const compiler = (row && row.compiler_version) || (detail.pair && detail.pair.compiler) || "this canrun version";
  const pull = "build/canrun cache pull SOURCE";
  const parts = [];
  if (row && row.plan_source) parts.push(el("p", { id: "detail-plan-source", text: `This row's plan: ${PLAN_SOURCES[row.plan_source] || row.plan_source}.` }));
  parts.push(el("div", { class: "command" }, el("pre", {}, el("code", { id: "detail-cache", text: pull })), copyButton(pull, "Copy")),
    el("p", { class: "note", text: `Run with ${compiler}: SOURCE is a folder or an http(s):// URL that ` +
      "build/canrun cache push SOURCE filled on a machine that compiled the plans with the same canrun version " +
      "(laid out as SOURCE/<compiler version>/index.json and one folder per entry); pull checks every file's size " +
      "and checksum before it installs anything." }),
    el("p", { class: "note", id: "detail-cache-key", text: "A plan is found by content, not by file name, size or " +
      "modification time: its key is the canrun version, the ISA, the backend, the XXH3-128 of config.json's bytes " +
      "and of each weight file's name and bytes, the shapes, the shard and the model program. The same files in any " +
      "folder find the same plans; a changed weight file misses. A plan from the cache changes only how long the " +
      "check takes, not its result." }));
  return section("Pre-populate the plan cache", ...parts);
}

function detailContent(detail) {
  const row = detail.row;
  const didRun = ran(row);
  const parts = [];
  const facts = el("dl");
  const fact = (term, value, id = null) => {
    if (value !== null && value !== undefined && value !== "")
      facts.append(el("dt", { text: term }), el("dd", { id, text: String(value) }));
  };
  const unknown = didRun ? null : `${DASH} (nothing ran)`;
  fact("Version pair", detail.pair ? `${detail.pair.compiler} / ${detail.pair.library}` : "no dataset yet");
  const license = (row && row.license) || (detail.catalog && detail.catalog.license);
  fact("Weights' licence", license ? `${license} (the weights' own terms: check them apart from canrun's licence)` : null, "detail-license");
  if (row) {
    fact("Task", row.task);
    fact("Architecture", row.architecture);
    fact("Weights", didRun ? row.weights ?? DASH : unknown, "detail-weights");
    fact("Quantization", row.quantization, "detail-quantization");
    fact("Cores", didRun ? row.cores ?? DASH : unknown, "detail-cores");
    fact("Wall time (compilation included)", didRun ? seconds(row.wall_time_s) ?? DASH : unknown, "detail-wall-time");
    if (didRun) {
      fact("Compile time", row.compile_time_s == null ? "not reached" : seconds(row.compile_time_s));
      if (row.warm_compile_time_s != null) fact("Warm start (the plan from the cache)", seconds(row.warm_compile_time_s), "detail-warm-compile");
      if (row.plan_source) fact("Plan", PLAN_SOURCES[row.plan_source] || row.plan_source);
      else if (row.plan_cache_hit != null) fact("Plan", row.plan_cache_hit ? "loaded from the plan cache" : "compiled");
      if (row.recompilations != null) fact("Recompilations", row.recompilations);
      if (row.graph_breaks != null) fact("Graph breaks", row.graph_breaks);
      if (row.eager_fallback != null) fact("Eager fallback", row.eager_fallback ? "yes: no graph was compiled" : "no");
      fact("Verification", row.verification);
      if (row.tokens_match != null) fact("Tokens equal the reference", row.tokens_match ? "yes" : "no");
      if (row.judge_score != null || row.judged_fluent != null) {
        const verdict = row.judged_fluent == null ? "" : row.judged_fluent ? "fluent" : "not fluent";
        const score = row.judge_score != null ? `score ${row.judge_score.toFixed(3)}` : "";
        fact("Judge", [verdict, score].filter(Boolean).join(", ") + (row.judge ? ` (${row.judge})` : ""));
      }
      fact("Load time", seconds(row.load_time_s));
    }
    const memory = [`peak ${didRun ? bytes(row.peak_host_memory_bytes) ?? DASH : DASH}${didRun ? " (host)" : " (nothing ran)"}`];
    if (row.memory_capacity_bytes != null) memory.push(`capacity ${bytes(row.memory_capacity_bytes)} (the cores the profile gives the run)`);
    if (row.planned_memory_bytes != null) memory.push(`planner's estimate ${bytes(row.planned_memory_bytes)}`);
    fact("Memory", memory.join(" · "), "detail-memory");
    if (didRun) {
      fact("Peak device memory", bytes(row.peak_device_memory_bytes) ?? "not measured on the cpu backend");
      fact("Peak activation memory (plan)", bytes(row.peak_activation_bytes));
    }
    fact("Revision", row.revision);
    fact("Checked at", row.timestamp);
    fact("Host", row.host);
    fact("Row schema version", row.schema_version);
  } else if (detail.catalog) {
    fact("Task", detail.catalog.task);
    fact("Architecture", detail.catalog.model_type);
  }
  // The planner's cores from the catalog's config on its profile: a plan, shown only where nothing ran.
  const listedRow = listed.get(detail.model_id);
  if (!didRun && listedRow && listedRow.plan) {
    const plan = listedRow.plan;
    fact(`Planner on ${plan.profile} (a plan, not run)`, `${plan.reason ?? plural(listedRow.planned_cores, "core")}: ${plan.detail}`, "detail-plan");
  }
  if (detail.catalog) {
    fact("Downloads rank", detail.catalog.downloads.rank);
    fact("Catalog", detail.catalog.selected ? "selected" : `not selected: ${detail.catalog.exclusion}`);
  }
  parts.push(el("p", { id: "detail-result" }, badge(row), " ", el("span", { text: resultSummary(row, detail) })));
  if (detail.yours)
    parts.push(el("p", { class: "explain", id: "detail-yours",
      text: "Yours: this row comes from your own results folder (what canrun check and canrun sweep record), not from the dataset canrun ships." }));
  if (row && didRun && row.weights === "synthetic") parts.push(el("p", { class: "explain", id: "detail-synthetic", text: SYNTHETIC }));
  if (row && didRun && row.weights === "real")
    parts.push(el("p", { class: "explain", text: "Real weights: the published checkpoint" + (row.revision ? ` at revision ${row.revision}.` : ".") }));
  parts.push(facts);
  if (row && row.error_message)
    parts.push(...section(didRun ? "Error" : "Why it was not run", el("pre", { id: "detail-error", text: row.error_message })));
  if (row && ENCODER_TASKS.includes(row.task)) {
    // An encoder's check encodes fixed texts: it has no generation to show, but its agreement.
    parts.push(...section("Texts encoded", el("pre", { id: "detail-prompt", text: row.prompt })));
    parts.push(...section("Agreement with the reference", el("p", { id: "detail-agreement", text: encoderAgreement(row) })));
  } else if (row) {
    parts.push(...section("Prompt", el("pre", { id: "detail-prompt", text: row.prompt })));
    const generated = generatedText(row);
    parts.push(...section(generated.title, el("pre", { id: "detail-generated", text: generated.text })));
    parts.push(...section("First divergence from the reference", el("p", { id: "detail-divergence", text: divergence(row) })));
  }
  parts.push(...runSection(row, detail));
  parts.push(...planCacheSection(row, detail));
  if (row) {
    const stack = el("table", { id: "detail-stack" },
      el("thead", {}, el("tr", {}, el("th", { scope: "col", text: "Component" }), el("th", { scope: "col", text: "Version" }))),
      el("tbody", {}, ...row.software_stack.map((c) => el("tr", {}, el("td", { text: c.component }), el("td", { text: c.version })))));
    parts.push(...section("Software stack", stack));
  }
  const packages = detail.extra_packages;
  parts.push(...section("Extra packages to install",
    el("p", { id: "detail-packages", text: packages.packages.length ? `pip install ${packages.packages.join(" ")}` : "None." }),
    el("p", { class: "note", text: packages.note })));
  if (row) {
    parts.push(...section("Reproduce script", el("pre", { id: "detail-script", text: row.reproduce_script }),
      copyButton(row.reproduce_script, "Copy script")));
  }
  if (detail.tested_in.length > 1)
    parts.push(...section("Also checked on", el("p", { text: detail.tested_in.map((p) => `${p.compiler} / ${p.library}`).join(", ") })));
  return parts;
}

let lastFocus = null;
async function openDetail(modelId) {
  const params = new URLSearchParams({ id: modelId });
  if (state.compiler) params.set("compiler", state.compiler);
  if (state.library) params.set("library", state.library);
  lastFocus = document.activeElement;
  $("detail-title").textContent = modelId;
  $("detail-body").replaceChildren(el("p", { text: "Loading…" }));
  if (!$("detail").open) $("detail").showModal();
  try {
    $("detail-body").replaceChildren(...detailContent(await getJson(`/api/model?${params}`)));
  } catch (error) {
    $("detail-body").replaceChildren(el("p", { class: "errors", text: error.message }));
  }
}

function closeDetail() {
  $("detail").close();
}

async function loadPairs() {
  const body = await getJson("/api/pairs");
  pairs = body.pairs;
  const link = (p) => el("a", { href: `/data/${encodeURIComponent(p.file)}`, download: p.file, text: p.file,
    title: "Download this version pair's Parquet file" });
  const links = body.pairs.flatMap((p, i) => [i ? ", " : "", link(p)]);
  $("data-source").replaceChildren(...(links.length ? links : ["no dataset files yet"]));
  syncVersionSelectors();
}

function debounce(fn, ms) {
  let timer = null;
  return (...args) => { clearTimeout(timer); timer = setTimeout(() => fn(...args), ms); };
}

function setView(view, focus) {
  state.view = view;
  loadRows();
  if (focus) document.querySelector(`[data-view=${view}]`).focus();
}

function wire() {
  fillSelect($("task"), TASKS, state.task);
  for (const tab of document.querySelectorAll("[role=tab]")) tab.addEventListener("click", () => setView(tab.dataset.view, false));
  document.querySelector(".tabs").addEventListener("keydown", (event) => {
    const step = { ArrowRight: 1, ArrowLeft: -1 }[event.key];
    if (!step) return;
    const index = (VIEWS.indexOf(state.view) + step + VIEWS.length) % VIEWS.length;
    setView(VIEWS[index], true);
    event.preventDefault();
  });
  $("controls").addEventListener("submit", (event) => event.preventDefault());
  $("task").addEventListener("change", () => { state.task = $("task").value; loadRows(); });
  $("search").addEventListener("input", debounce(() => { state.q = $("search").value.trim(); loadRows(); }, 120));
  $("compiler").addEventListener("change", () => { state.compiler = $("compiler").value; syncVersionSelectors(); loadRows(); });
  $("library").addEventListener("change", () => { state.library = $("library").value; loadRows(); });
  $("sort").addEventListener("change", () => { state.sort = $("sort").value; loadRows(); });
  $("order").addEventListener("change", () => { state.order = $("order").value; loadRows(); });
  $("compare-controls").addEventListener("submit", (event) => event.preventDefault());
  $("compare-from").addEventListener("change", () => { state.from = $("compare-from").value; loadDiff(); });
  $("compare-to").addEventListener("change", () => { state.to = $("compare-to").value; loadDiff(); });
  $("compare-all").addEventListener("change", () => { state.all = $("compare-all").checked ? "1" : ""; loadDiff(); });
  for (const th of document.querySelectorAll("th[data-sort]")) {
    th.querySelector("button").addEventListener("click", () => {
      state.order = state.sort === th.dataset.sort && state.order === "asc" ? "desc" : "asc";
      state.sort = th.dataset.sort;
      loadRows();
    });
  }
  $("detail-close").addEventListener("click", closeDetail);
  $("detail").addEventListener("close", () => { if (lastFocus) lastFocus.focus(); });
  window.addEventListener("hashchange", () => { readHash(); syncVersionSelectors(); loadRows(); });
}

async function start() {
  readHash();
  wire();
  legend();
  try {
    await loadPairs();
  } catch (error) {
    $("status").textContent = `Could not load the version pairs: ${error.message}`;
    return;
  }
  await loadRows();
}

start();
