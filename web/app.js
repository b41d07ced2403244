// canrun Space: the page's behaviour. Plain JavaScript over the JSON API; state lives in the URL
// hash so a view can be shared and the back button works.
"use strict";

const PAGE_SIZE = 500;
const TASKS = ["text-generation", "image-text-to-text"];
const VIEWS = ["selected", "trending", "downloads", "tested", "compare"];
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

function statusClass(result) {
  if (!result) return "none";
  if (result === "PASS" || result === "PASS_TOP5" || result === "PASS_JUDGE") return "pass";
  if (result === "NOT_TESTED" || result === "EXCLUDED" || result === "UNSUPPORTED_ARCHITECTURE") return "none";
  if (result === "TIMEOUT" || result === "OOM") return "warn";
  return "fail";
}

const SYNTHETIC_PASS = "Synthetic weights: the real architecture at its real config with random weights, " +
  "token-exact with the reference. It shows the model runs correctly here, not how well its real weights write.";

// A pass on synthetic weights looks apart from a pass on the real ones (dashed, with a tooltip).
function badge(result, weights) {
  const cls = statusClass(result);
  const mark = { pass: "✓", fail: "✗", warn: "!", none: "–" }[cls];
  const synthetic = cls === "pass" && weights === "synthetic";
  return el("span", { class: `badge ${cls}${synthetic ? " synthetic" : ""}`, text: `${mark} ${result || "UNTESTED"}`,
    title: synthetic ? SYNTHETIC_PASS : null, "aria-description": synthetic ? "on synthetic weights" : null });
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

// The cores a check used, or for a model not checked yet the planner's count from its config.
function coresCell(row) {
  const cell = el("td", { class: "num", "data-label": "Cores" });
  if (row.cores !== null || !row.plan) {
    cell.textContent = row.cores ?? "—";
    return cell;
  }
  const outcome = row.plan.reason ?? `${row.planned_cores} cores`;
  const planned = `planned on ${row.plan.profile}: ${outcome} (${row.plan.detail})`;
  cell.append(el("span", { text: row.planned_cores ?? "—", title: planned }),
    el("span", { class: "sub", text: `planned, ${row.plan.profile}` }));
  return cell;
}

// A torch.compile run that captured nothing, or broke its graphs, says so next to its result.
function compileNote(row) {
  if (row.eager_fallback) return "ran eagerly: torch.compile captured no graph";
  if (row.graph_breaks) return `${row.graph_breaks} graph break${row.graph_breaks === 1 ? "" : "s"}`;
  return null;
}

function rowElement(row) {
  const open = () => openDetail(row.model_id);
  const name = el("button", { type: "button", class: "model", text: row.model_id, "aria-haspopup": "dialog" });
  name.addEventListener("click", (event) => { event.stopPropagation(); open(); });
  const resultCell = el("td", { "data-label": "Result" }, badge(row.result, row.weights));
  const compiled = compileNote(row);
  if (compiled) resultCell.append(el("span", { class: "sub compile-note", text: compiled }));
  if (row.verification) resultCell.append(el("span", { class: "sub", text: `verified: ${row.verification}` }));
  if (row.reason) resultCell.append(el("span", { class: "sub", text: row.reason }));
  let memory = bytes(row.peak_device_memory_bytes);
  const memoryCell = el("td", { class: "num", "data-label": "Peak device memory" });
  if (memory) memoryCell.textContent = memory;
  else {
    memoryCell.append(el("span", { text: "—", title: "not measured on this backend" }));
    const host = bytes(row.peak_host_memory_bytes);
    if (host) memoryCell.append(el("span", { class: "sub", text: `host ${host}` }));
  }
  const tr = el("tr", { "data-model": row.model_id },
    el("td", { class: "num", "data-label": "Rank", text: row.rank ?? "" }),
    el("td", { "data-label": "Model" }, name, row.architecture ? el("span", { class: "sub", text: row.architecture }) : null),
    resultCell,
    coresCell(row),
    el("td", { class: "num", "data-label": "Wall time", text: seconds(row.wall_time_s) ?? "—" }),
    memoryCell,
    el("td", { "data-label": "Weights", text: row.weights ?? "—" }));
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

const resultOf = (row) => (row ? badge(row.result, row.weights) : el("span", { text: "no row" }));

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
  $("compare").hidden = !comparing;
  for (const id of ["controls", "results", "ranking", "status"]) $(id).hidden = comparing;
  if (comparing) {
    syncControls();
    return loadDiff();
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

function detailContent(detail) {
  const row = detail.row;
  const parts = [];
  const facts = el("dl");
  const fact = (term, value) => { if (value !== null && value !== undefined && value !== "") facts.append(el("dt", { text: term }), el("dd", { text: String(value) })); };
  fact("Version pair", detail.pair ? `${detail.pair.compiler} / ${detail.pair.library}` : "no dataset yet");
  if (row) {
    fact("Task", row.task);
    fact("Architecture", row.architecture);
    fact("Weights", row.weights);
    fact("Cores", row.cores);
    fact("Wall time (compilation included)", seconds(row.wall_time_s));
    fact("Compile time", row.compile_time_s === null ? "not reached" : seconds(row.compile_time_s));
    if (row.plan_cache_hit != null) fact("Plan", row.plan_cache_hit ? "loaded from the plan cache" : "compiled");
    if (row.recompilations != null) fact("Recompilations", row.recompilations);
    if (row.graph_breaks != null) fact("Graph breaks", row.graph_breaks);
    if (row.eager_fallback != null) fact("Eager fallback", row.eager_fallback ? "yes: no graph was compiled" : "no");
    fact("Verification", row.verification);
    if (row.judge_score != null) fact("Judge", `${row.judge_score.toFixed(3)} (${row.judge})`);
    fact("Peak activation memory (plan)", bytes(row.peak_activation_bytes));
    fact("Load time", seconds(row.load_time_s));
    fact("Peak device memory", bytes(row.peak_device_memory_bytes) ?? "not measured on this backend");
    fact("Peak host memory", bytes(row.peak_host_memory_bytes));
    fact("Revision", row.revision);
    fact("Checked at", row.timestamp);
    fact("Host", row.host);
  } else if (detail.catalog) {
    fact("Task", detail.catalog.task);
    fact("Architecture", detail.catalog.model_type);
  }
  if (detail.catalog) {
    fact("Downloads rank", detail.catalog.downloads.rank);
    fact("Catalog", detail.catalog.selected ? "selected" : `not selected: ${detail.catalog.exclusion}`);
  }
  const result = el("p", {}, badge(row ? row.result : null, row ? row.weights : null));
  if (!row) result.append(" ", detail.untested_reason);
  parts.push(result, facts);
  if (row && row.error_message) parts.push(...section("Error", el("pre", { id: "detail-error", text: row.error_message })));
  if (row && row.generated_text !== null) parts.push(...section("Generated text", el("pre", { text: row.generated_text })));
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
    parts.push(...section("Reproduce", el("pre", { id: "detail-script", text: row.reproduce_script }),
      copyButton(row.reproduce_script, "Copy script")));
  }
  const cache = detail.plan_cache;
  const cacheParts = [];
  if (cache.command) cacheParts.push(el("pre", { id: "detail-cache", text: cache.command }));
  cacheParts.push(el("p", { class: "note", text: cache.note }));
  parts.push(...section("Pre-populate the plan cache", ...cacheParts));
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
  try {
    await loadPairs();
  } catch (error) {
    $("status").textContent = `Could not load the version pairs: ${error.message}`;
    return;
  }
  await loadRows();
}

start();
