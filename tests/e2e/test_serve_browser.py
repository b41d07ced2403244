"""The Space in headless Chromium (Debian's chromium + chromium-driver, driven by Selenium): load
the page, switch views, tasks and version pairs, search, sort, open a model's detail and check
what is shown against the dataset read with pyarrow and the API's answers; the legend's badges,
a pass on synthetic weights, a NOT_TESTED row, the detail's prompt, generated tokens, first
divergence and "run it yourself" command; keyboard use and a narrow screen. Saves screenshots to
test-artifacts/ (space.png: the page; space-legend.png; space-not-tested.png;
space-image-text-to-text.png: that task's Selected view; space-sentence-similarity.png: an encoder
task's view, with its agreement and throughput columns; space-detail.png: a synthetic pass's
detail; space-detail-error.png: a failed row's detail; space-compare.png; space-narrow.png)."""
import json
import os
import shlex
import shutil
import subprocess

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select, WebDriverWait

from conftest import REPO_ROOT
from space import ENGINE_GLOB, TORCH_PAIR, Space, entry, huge_config, make_dataset, read_pair

ARTIFACTS = REPO_ROOT / "test-artifacts"
HUGE = "test/huge-llama"  # no device profile holds it: a NOT_TESTED row
HUGE_LICENSE = "test-weights-licence-1.0"
SELECTED = ["test/tiny-llama", "test/tiny-qwen2", "test/tiny-qwen3", "test/tiny-mistral", "test/unknown-arch",
            "test/tiny-later", HUGE]
DASH = "—"
ENCODERS = REPO_ROOT / "tests" / "fixtures" / "encoders"
EMBEDDER, RANKER = "test/tiny-embedder", "test/tiny-ranker"


@pytest.fixture(scope="module")
def space(canrun_bin, tmp_path_factory):
    huge = entry(HUGE, "llama", huge_config(), 8, license=HUGE_LICENSE)
    # An embedding model and a cross-encoder at the encoder fixtures' configs (synthetic weights).
    embedder = entry(EMBEDDER, "bert", json.loads((ENCODERS / "bert_mean" / "config.json").read_text()), 1,
                     task="sentence-similarity")
    embedder["sentence_transformers"] = {"modules": ["Transformer", "Pooling", "Normalize"], "pooling": {"mode": "mean"}}
    ranker = entry(RANKER, "bert", json.loads((ENCODERS / "bert_cross_encoder" / "config.json").read_text()), 1,
                   task="text-ranking")
    results, catalog = make_dataset(canrun_bin, tmp_path_factory.mktemp("space"), extra=[huge, embedder, ranker])
    server = Space(canrun_bin, results, catalog)
    yield server, results
    code, stderr = server.stop()
    assert code == 0, stderr


@pytest.fixture(scope="module")
def browser():
    chromium = shutil.which("chromium")
    driver_path = shutil.which("chromedriver")
    if not chromium or not driver_path:
        pytest.fail("the browser test needs Debian's chromium and chromium-driver: run scripts/install_deps.sh")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for argument in ["--headless=new", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1280,900"]:
        options.add_argument(argument)
    if os.geteuid() == 0:
        options.add_argument("--no-sandbox")  # Chromium refuses to run its sandbox as root
    driver = webdriver.Chrome(service=Service(driver_path), options=options)
    yield driver
    driver.quit()


def wait(driver, condition, timeout=10):
    return WebDriverWait(driver, timeout).until(lambda d: condition(d))


def shown_rows(driver):
    """[(model id, result the badge names)] of the table body, read in one step (the page may re-render)."""
    rows = driver.execute_script("return [...document.querySelectorAll('#rows tbody tr')]"
                                 ".map(tr => [tr.dataset.model, tr.querySelector('.badge').dataset.result]);")
    return [tuple(row) for row in rows]


def cells(driver, model):
    """{column label: text} of the model's table row."""
    row = driver.find_element(By.CSS_SELECTOR, f'#rows [data-model="{model}"]')
    return {td.get_attribute("data-label"): td.text for td in row.find_elements(By.TAG_NAME, "td")}


def open_detail(driver, model):
    driver.find_element(By.CSS_SELECTOR, f'#rows [data-model="{model}"] button.model').click()
    wait(driver, lambda d: d.find_element(By.ID, "detail-title").text == model and d.find_elements(By.ID, "detail-run-setup"))
    return driver.find_element(By.ID, "detail")


def close_detail(driver):
    driver.switch_to.active_element.send_keys(Keys.ESCAPE)
    wait(driver, lambda d: not d.find_element(By.ID, "detail").get_attribute("open"))


def text_of(driver, element_id):
    """An element's textContent, exactly (WebElement.text trims and folds whitespace)."""
    return driver.execute_script("return document.getElementById(arguments[0]).textContent", element_id)


def wait_for_rows(driver, expected_ids):
    wait(driver, lambda d: [m for m, _ in shown_rows(d)] == expected_ids)


def save(driver, name):
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / name
    driver.save_screenshot(str(path))
    print(f"screenshot: {path}")
    return path


def test_page_views_search_detail_and_keyboard(space, browser):
    server, results = space
    table = read_pair(results, ENGINE_GLOB)
    browser.get(server.url)
    selected = SELECTED
    wait_for_rows(browser, selected)
    assert browser.find_element(By.ID, "tab-selected").get_attribute("aria-selected") == "true"
    for model, badge in shown_rows(browser):
        expected = table[model]["result"] if model in table else "UNTESTED"
        assert badge == expected, (model, badge)
    later = browser.find_element(By.CSS_SELECTOR, '[data-model="test/tiny-later"]')
    assert "selected, not checked yet on canrun-" in later.text
    llama = table["test/tiny-llama"]
    cells = browser.find_element(By.CSS_SELECTOR, '[data-model="test/tiny-llama"]').find_elements(By.TAG_NAME, "td")
    assert cells[3].text == str(llama["cores"])
    assert cells[4].text == f"{llama['wall_time_s']:.2f} s"
    assert cells[6].text == "synthetic"
    assert "host" in cells[5].text  # no device memory on the CPU backend: the host peak instead
    assert browser.find_element(By.ID, "compiler").get_attribute("value") == table["test/tiny-llama"]["compiler_version"]
    # A pass on synthetic weights is told apart from one on real weights, with a tooltip saying why.
    llama_badge = browser.find_element(By.CSS_SELECTOR, '[data-model="test/tiny-llama"] .badge')
    assert llama["weights"] == "synthetic" and llama["result"] == "PASS"
    assert "synthetic" in llama_badge.get_attribute("class").split()
    assert llama_badge.text == "✓ PASS synthetic"
    assert "random weights" in llama_badge.get_attribute("title")
    # Each version pair's Parquet file is offered for download.
    links = browser.find_elements(By.CSS_SELECTOR, "#data-source a")
    assert sorted(a.text for a in links) == sorted(p.name for p in results.glob("*.parquet"))
    assert all(a.get_attribute("href").endswith("/data/" + a.text) for a in links)
    save(browser, "space.png")

    # Downloads: the whole ranking, excluded models with their reason.
    browser.find_element(By.ID, "tab-downloads").click()
    wait_for_rows(browser, selected[:5] + ["test/excluded", "test/tiny-later", HUGE])
    assert "not prioritized yet" in browser.find_element(By.CSS_SELECTOR, '[data-model="test/excluded"]').text
    assert "as of 2026-05-12" in browser.find_element(By.ID, "ranking").text
    # Trending: the catalog has no such ranking; the page says so.
    browser.find_element(By.ID, "tab-trending").click()
    wait(browser, lambda d: "no trending rank in this test" in d.find_element(By.ID, "ranking").text)
    assert shown_rows(browser) == []
    # Keyboard: arrow keys move between tabs.
    browser.find_element(By.ID, "tab-trending").send_keys(Keys.ARROW_RIGHT)
    wait(browser, lambda d: d.find_element(By.ID, "tab-downloads").get_attribute("aria-selected") == "true")
    assert browser.switch_to.active_element.get_attribute("id") == "tab-downloads"

    # The other task.
    Select(browser.find_element(By.ID, "task")).select_by_value("image-text-to-text")
    wait_for_rows(browser, ["test/tiny-vlm", "test/tiny-qwen3-vl"])
    browser.find_element(By.ID, "tab-selected").click()
    wait_for_rows(browser, ["test/tiny-qwen3-vl"])
    vision = table["test/tiny-qwen3-vl"]
    assert vision["task"] == "image-text-to-text" and vision["result"] == "PASS"
    [(_, badge)] = shown_rows(browser)
    assert badge == "PASS"
    save(browser, "space-image-text-to-text.png")
    browser.find_element(By.ID, "tab-downloads").click()
    Select(browser.find_element(By.ID, "task")).select_by_value("text-generation")

    # Search filters as you type.
    search = browser.find_element(By.ID, "search")
    search.send_keys("qwen")
    wait_for_rows(browser, ["test/tiny-qwen2", "test/tiny-qwen3"])
    search.send_keys(Keys.CONTROL, "a")
    search.send_keys(Keys.BACKSPACE)  # as a user clears it: an input event, unlike WebElement.clear()
    wait(browser, lambda d: len(shown_rows(d)) == 8)

    # Sorting by a column header, then back.
    browser.find_element(By.CSS_SELECTOR, 'th[data-sort="model_id"] button').click()
    wait_for_rows(browser, sorted(selected[:5] + ["test/excluded", "test/tiny-later", HUGE]))
    assert browser.find_element(By.CSS_SELECTOR, 'th[data-sort="model_id"]').get_attribute("aria-sort") == "ascending"

    # The other version pair.
    torch = read_pair(results, f"{TORCH_PAIR[0]}__{TORCH_PAIR[1]}.parquet")
    Select(browser.find_element(By.ID, "compiler")).select_by_value(TORCH_PAIR[0])
    wait(browser, lambda d: dict(shown_rows(d)).get("test/tiny-llama") == torch["test/tiny-llama"]["result"])
    assert browser.find_element(By.ID, "library").get_attribute("value") == TORCH_PAIR[1]
    Select(browser.find_element(By.ID, "compiler")).select_by_index(0)

    # A row's detail, opened from the keyboard: error, stack, packages, script with copy, plan cache.
    mistral = table["test/tiny-mistral"]
    wait(browser, lambda d: dict(shown_rows(d)).get("test/tiny-mistral") == "FAIL_RUNTIME")
    button = browser.find_element(By.CSS_SELECTOR, '[data-model="test/tiny-mistral"] button.model')
    button.send_keys(Keys.ENTER)
    dialog = browser.find_element(By.ID, "detail")
    wait(browser, lambda d: d.find_elements(By.ID, "detail-script"))
    assert dialog.find_element(By.ID, "detail-title").text == "test/tiny-mistral"
    assert dialog.find_element(By.ID, "detail-error").text == mistral["error_message"].strip()
    script = browser.execute_script("return document.getElementById('detail-script').textContent")
    assert script == mistral["reproduce_script"]
    stack = [[td.text for td in tr.find_elements(By.TAG_NAME, "td")]
             for tr in dialog.find_elements(By.CSS_SELECTOR, "#detail-stack tbody tr")]
    assert stack == [[c["component"], c["version"]] for c in mistral["software_stack"]]
    assert dialog.find_element(By.ID, "detail-packages").text == "None."
    compiler = mistral["compiler_version"]
    assert dialog.find_element(By.ID, "detail-cache").text == "build/canrun cache pull SOURCE"
    assert f"Run with {compiler}: SOURCE is a folder or an http(s):// URL" in dialog.text
    # The plan cache's key is content: the page must not say it matches names, sizes or times.
    key = dialog.find_element(By.ID, "detail-cache-key").text
    assert key.startswith("A plan is found by content, not by file name, size or modification time")
    assert dialog.find_element(By.XPATH, ".//button[text()='Copy script']").is_displayed()
    save(browser, "space-detail-error.png")
    browser.switch_to.active_element.send_keys(Keys.ESCAPE)
    wait(browser, lambda d: not d.find_element(By.ID, "detail").get_attribute("open"))
    assert browser.switch_to.active_element.text == "test/tiny-mistral"  # focus returns to the row


FAILURES = ["FAIL_LOAD", "FAIL_COMPILE", "FAIL_RUNTIME", "FAIL_MISMATCH", "FAIL_JUDGE", "TIMEOUT", "OOM"]
SETUP = "bash scripts/install_deps.sh && BUILD_TARGETS=canrun bash scripts/build.sh build"


def test_encoder_task_views_show_agreement_and_throughput(space, browser):
    """An encoder task's view: its models only, with the agreement (min cosine or score difference)
    and sentences/s columns, which the text-generation view hides."""
    server, results = space
    table = read_pair(results, ENGINE_GLOB)
    browser.set_window_size(1280, 900)
    browser.get(server.url + "#view=selected")
    wait_for_rows(browser, SELECTED)
    agreement = browser.find_element(By.CSS_SELECTOR, 'th[data-sort="min_cosine"]')
    assert not agreement.is_displayed()
    Select(browser.find_element(By.ID, "task")).select_by_value("sentence-similarity")
    wait_for_rows(browser, [EMBEDDER])
    embedder = table[EMBEDDER]
    assert embedder["task"] == "sentence-similarity" and embedder["result"] == "PASS", embedder["error_message"]
    assert embedder["min_cosine"] >= 0.999 and embedder["sentences_per_s"] > 0
    assert agreement.is_displayed()
    shown = cells(browser, EMBEDDER)
    assert shown["Agreement"] == f"cos ≥ {embedder['min_cosine']:.6f}"
    assert shown["Sentences/s"] == f"{embedder['sentences_per_s']:.1f}"
    assert shown["Weights"] == "synthetic"
    save(browser, "space-sentence-similarity.png")
    # Its detail shows the texts it encoded and its agreement, not a generation.
    open_detail(browser, EMBEDDER)
    assert text_of(browser, "detail-prompt") == embedder["prompt"]
    assert text_of(browser, "detail-agreement").startswith(
        f"smallest cosine similarity of a tested embedding with the reference's: {embedder['min_cosine']:.9f}")
    assert not browser.find_elements(By.ID, "detail-generated")
    close_detail(browser)
    Select(browser.find_element(By.ID, "task")).select_by_value("text-ranking")
    wait_for_rows(browser, [RANKER])
    ranker = table[RANKER]
    assert ranker["result"] == "PASS" and ranker["max_score_difference"] <= 1e-4, ranker["error_message"]
    mantissa, exponent = f"{ranker['max_score_difference']:.1e}".split("e")  # as JavaScript's toExponential(1)
    assert cells(browser, RANKER)["Agreement"] == f"Δ ≤ {mantissa}e{'-' if int(exponent) < 0 else '+'}{abs(int(exponent))}"
    Select(browser.find_element(By.ID, "task")).select_by_value("text-generation")
    wait_for_rows(browser, SELECTED)
    assert not agreement.is_displayed()


def test_legend_tells_every_kind_of_result_apart(space, browser):
    """The legend is on the page (not a tooltip), one entry per kind of result, and no two kinds
    look alike: colour, background and border style differ, and so does the symbol."""
    server, _ = space
    browser.set_window_size(1280, 900)
    browser.get(server.url)
    wait_for_rows(browser, SELECTED)
    legend = browser.find_element(By.ID, "legend")
    assert legend.is_displayed() and "What the results mean" in legend.text
    entries = browser.execute_script("""return [...document.querySelectorAll('#legend-list li')].map(li => {
        const badge = li.querySelector('.badge'), style = getComputedStyle(badge);
        return {kind: li.dataset.kind, text: li.textContent, symbol: badge.textContent.trim()[0],
                look: [style.color, style.backgroundColor, style.borderTopStyle].join(' ')}; });""")
    kinds = [e["kind"] for e in entries]
    assert kinds == ["pass", "pass-synthetic", "near", "not-tested", "untested", "fail", "unsupported", "excluded"]
    assert len({e["look"] for e in entries}) == len(entries), entries
    assert len({e["symbol"] for e in entries}) == len(entries) - 1  # the two passes share the tick
    text = {e["kind"]: e["text"] for e in entries}
    assert "Real weights" in text["pass"]
    assert "runs and matches the reference; text quality not judged" in text["pass-synthetic"]
    assert "PASS_TOP5" in text["near"] and "PASS_JUDGE" in text["near"]
    assert "NOT_TESTED" in text["not-tested"] and "needs_memory" in text["not-tested"]
    assert "UNTESTED" in text["untested"] and "No row yet" in text["untested"]
    assert all(status in text["fail"] for status in FAILURES)
    assert "UNSUPPORTED_ARCHITECTURE" in text["unsupported"] and "EXCLUDED" in text["excluded"]
    # The tested run is the compiled cpu backend; ref is only the reference it is compared with.
    assert "compiled cpu backend (the tested run)" in legend.text
    assert "the ref backend in f32 (the reference)" in legend.text
    save(browser, "space-legend.png")


def test_not_tested_row_shows_its_reason_and_nothing_measured(space, browser):
    """A model no device profile holds: NOT_TESTED, its reason code where the row has one, and a
    dash for cores, wall time, memory and weights, in the table and in the detail."""
    server, results = space
    table = read_pair(results, ENGINE_GLOB)
    assert table[HUGE]["result"] == "NOT_TESTED"
    _, listing, _ = server.get("/api/rows?view=selected")
    listed = {row["model_id"]: row for row in listing["rows"]}[HUGE]
    _, model, _ = server.get(f"/api/model?id={HUGE}")
    row = model["row"]
    browser.set_window_size(1280, 900)
    browser.get(server.url)
    wait_for_rows(browser, SELECTED)
    for model_id in [HUGE, "test/unknown-arch"]:  # NOT_TESTED, UNSUPPORTED_ARCHITECTURE: nothing ran
        shown = cells(browser, model_id)
        assert [shown["Cores"], shown["Wall time"], shown["Peak device memory"], shown["Weights"]] == [DASH] * 4, shown
    badge = browser.find_element(By.CSS_SELECTOR, f'#rows [data-model="{HUGE}"] .badge')
    assert badge.get_attribute("data-result") == "NOT_TESTED"
    code = listed.get("reason_code")
    assert badge.text == ("⊘ NOT_TESTED " + code if code else "⊘ NOT_TESTED")
    assert "needs more than 1 core of local" in cells(browser, HUGE)["Result"]
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", badge)
    save(browser, "space-not-tested.png")

    dialog = open_detail(browser, HUGE)
    nothing = f"{DASH} (nothing ran)"
    assert [text_of(browser, f"detail-{fact}") for fact in ["cores", "weights", "wall-time"]] == [nothing] * 3
    assert text_of(browser, "detail-memory").startswith(f"peak {DASH} (nothing ran)")
    if row.get("reason_code"):
        assert row["reason_code"] in dialog.find_element(By.ID, "detail-result").text
    assert HUGE_LICENSE in text_of(browser, "detail-license")
    assert text_of(browser, "detail-error") == row["error_message"]
    assert text_of(browser, "detail-prompt") == row["prompt"]
    assert text_of(browser, "detail-generated") == "Nothing was generated: the check did not run."
    assert text_of(browser, "detail-divergence") == "not compared: nothing ran"
    # The planner's cores on the catalog's profile are a plan, labelled so, not a run.
    assert "(a plan, not run)" in dialog.text and "needs more than 16 cores" in text_of(browser, "detail-plan")
    assert text_of(browser, "detail-run") == row.get("run_command", f"build/canrun check {HUGE} --synthetic")
    close_detail(browser)


def test_detail_of_a_synthetic_pass(space, browser, canrun_bin, tmp_path):
    """The detail of a PASS on synthetic weights: what synthetic means, PASS on N cores, the prompt,
    the generated tokens (synthetic weights have no tokenizer), no divergence, and a run-it-yourself
    command that is the row's own (verbatim) after the set-up from a fresh clone."""
    server, _ = space
    _, model, _ = server.get("/api/model?id=test/tiny-llama")
    row = model["row"]
    assert row["result"] == "PASS" and row["weights"] == "synthetic"
    browser.set_window_size(1280, 900)
    browser.get(server.url)
    wait_for_rows(browser, SELECTED)
    dialog = open_detail(browser, "test/tiny-llama")
    cores = row["cores"]
    assert f"PASS on {cores} core{'' if cores == 1 else 's'}, synthetic weights." in text_of(browser, "detail-result")
    assert "the quality of the text is not judged" in text_of(browser, "detail-synthetic")
    assert text_of(browser, "detail-cores") == str(cores) and text_of(browser, "detail-weights") == "synthetic"
    assert text_of(browser, "detail-memory").startswith("peak ") and "(host)" in text_of(browser, "detail-memory")
    assert text_of(browser, "detail-prompt") == row["prompt"]
    generated = row["generated_text"]
    if generated is None:
        generated = " ".join(map(str, row["generated_token_ids"]))
    assert text_of(browser, "detail-generated") == generated
    assert row["generated_token_ids"] == row["reference_token_ids"]
    assert text_of(browser, "detail-divergence") == "none: every token equals the reference"
    assert text_of(browser, "detail-run-setup") == SETUP
    assert all((REPO_ROOT / "scripts" / name).is_file() for name in ["install_deps.sh", "build.sh"])
    assert text_of(browser, "detail-run") == row.get("run_command", "build/canrun check test/tiny-llama --synthetic")
    for label in ["Copy set-up", "Copy command"]:
        assert dialog.find_element(By.XPATH, f".//button[text()='{label}']").is_displayed()
    browser.execute_script("document.getElementById('detail-prompt').previousElementSibling.scrollIntoView({block: 'start'})")
    save(browser, "space-detail.png")
    shown = text_of(browser, "detail-run")
    close_detail(browser)
    # The command as shown, pasted into a shell in the clone (this test's binary for build/canrun),
    # checks the model again to the same row.
    assert shown.startswith("build/canrun check ")
    again = subprocess.run(["bash", "-c", shlex.quote(canrun_bin) + shown[len("build/canrun"):] + " --json --no-record"],
                           capture_output=True, text=True, cwd=REPO_ROOT, timeout=300,
                           env=dict(os.environ, XDG_CACHE_HOME=str(tmp_path)))
    assert again.returncode == 0, again.stderr
    repeated = json.loads(again.stdout)
    assert (repeated["result"], repeated["generated_token_ids"]) == (row["result"], row["generated_token_ids"])


def test_fields_of_newer_rows_are_shown(space, browser):
    """The row fields a newer canrun adds (reason_code, run_command, first_divergence_step,
    tokens_match, memory_capacity_bytes, planned_memory_bytes, plan_source, license,
    schema_version), rendered by the page's own functions from real API answers with those fields
    added; and a NOT_TESTED row that still carries cores, weights and a wall time shows none."""
    server, _ = space
    _, listing, _ = server.get("/api/rows?view=selected")
    huge = {row["model_id"]: row for row in listing["rows"]}[HUGE]
    _, model, _ = server.get("/api/model?id=test/tiny-llama")
    tested = list(model["row"]["generated_token_ids"])
    reference = list(tested)
    reference[3] += 1
    row = dict(model["row"], schema_version=2, run_command="build/canrun check test/tiny-llama --synthetic --profile local",
               generated_text="Paris is the capital of France.", generated_token_ids=tested,
               reference_token_ids=reference, first_divergence_step=3, tokens_match=False, judged_fluent=None,
               memory_capacity_bytes=24 * 2**30, planned_memory_bytes=3 * 2**30, plan_source="remote_cache",
               license="apache-2.0", reason_code=None)
    browser.set_window_size(1280, 900)
    browser.get(server.url)
    wait_for_rows(browser, SELECTED)
    shown = browser.execute_script("""
        const box = document.createElement('div');
        box.append(...detailContent(arguments[0]));
        const text = (id) => box.querySelector('#' + id).textContent;
        const list = document.createElement('tbody');
        list.append(rowElement(arguments[1]));
        return {run: text('detail-run'), divergence: text('detail-divergence'), generated: text('detail-generated'),
                memory: text('detail-memory'), license: text('detail-license'), plan: text('detail-plan-source'),
                all: box.textContent, badge: list.querySelector('.badge').textContent,
                cells: [...list.querySelectorAll('td')].map(td => td.textContent)};""",
        dict(model, row=row),
        dict(huge, reason_code="needs_memory", cores=1, weights="synthetic", wall_time_s=0.01,
             peak_host_memory_bytes=2**30))
    assert shown["run"] == row["run_command"]
    assert shown["divergence"] == (f"step 3: the first 3 tokens equal the reference "
                                   f"(tested token {tested[3]}, reference {reference[3]})")
    assert shown["generated"] == "Paris is the capital of France."
    assert shown["memory"].startswith("peak ")
    assert shown["memory"].endswith(" (host) · capacity 24.0 GiB (the cores the profile gives the run) · "
                                    "planner's estimate 3.0 GiB")
    assert shown["license"].startswith("apache-2.0 (the weights' own terms")
    assert shown["plan"] == "This row's plan: pulled from a remote plan cache (canrun cache pull)."
    assert "Tokens equal the reference" in shown["all"] and "Row schema version2" in shown["all"]
    assert shown["badge"] == "⊘ NOT_TESTED needs_memory"
    # The encoder columns (Agreement, Sentences/s) follow, hidden for a generation task.
    rank, _, _, cores, wall, memory, weights, agreement, rate = shown["cells"]
    assert agreement == rate == DASH  # this row has neither
    assert [cores, wall, memory, weights] == [DASH] * 4


def test_compare_versions_view(space, browser):
    """The older pair (torch) against the newer (the engine): each changed model with both
    results, then every model with "Unchanged models too"."""
    server, results = space
    engine = read_pair(results, ENGINE_GLOB)
    torch = read_pair(results, f"{TORCH_PAIR[0]}__{TORCH_PAIR[1]}.parquet")
    browser.set_window_size(1280, 900)
    browser.get(server.url + "#view=compare")
    wait(browser, lambda d: "models ·" in d.find_element(By.ID, "compare-status").text)
    assert browser.find_element(By.ID, "tab-compare").get_attribute("aria-selected") == "true"
    assert not browser.find_element(By.ID, "results").is_displayed()
    assert browser.find_element(By.ID, "compare-from").get_attribute("value") == "__".join(TORCH_PAIR)

    def diff_rows():
        return browser.execute_script(
            "return [...document.querySelectorAll('#diff-rows tbody tr')].map(tr => [tr.dataset.model,"
            " ...[...tr.querySelectorAll('td')].slice(2, 5)"
            ".map(td => td.querySelector('.badge') ? td.querySelector('.badge').dataset.result : td.textContent)]);")

    shown = diff_rows()
    assert shown, "no changed models between the torch and engine pairs"
    for model, older, newer, changes in shown:
        assert older == torch[model]["result"] if model in torch else older == "no row"
        assert newer == engine[model]["result"] if model in engine else newer == "no row"
        assert changes != "unchanged"
    save(browser, "space-compare.png")
    browser.find_element(By.ID, "compare-all").click()
    wait(browser, lambda d: len(diff_rows()) == len(set(engine) | set(torch)))
    assert "compare" in browser.current_url and "all=1" in browser.current_url


def test_narrow_screen_has_no_sideways_scroll(space, browser):
    server, _ = space
    browser.set_window_size(390, 844)
    try:
        browser.get(server.url + "#view=selected")
        wait(browser, lambda d: len(shown_rows(d)) == len(SELECTED))
        overflow = browser.execute_script(
            "return document.documentElement.scrollWidth - document.documentElement.clientWidth")
        assert overflow <= 0
        cell = browser.find_element(By.CSS_SELECTOR, '[data-model="test/tiny-llama"] td[data-label="Cores"]')
        assert cell.is_displayed()
        save(browser, "space-narrow.png")
    finally:
        browser.set_window_size(1280, 900)


def test_training_view_draws_the_shipped_training_rows_loss_curves(canrun_bin, browser):
    """The Training tab over the dataset canrun ships: its SmolLM2-135M-Instruct training rows
    (real weights, float32 and bfloat16), each with a loss curve over the reference's; a row's
    detail draws the curve at full size with the restart check and canrun's own step-0 loss.
    Screenshots: space-training.png, space-training-detail.png."""
    server = Space(canrun_bin, REPO_ROOT / "dataset", REPO_ROOT / "data" / "catalog.jsonl")
    try:
        _, body, _ = server.get("/api/training?task=text-generation")
        rows = body["rows"]
        assert {row["model_id"] for row in rows} >= {"HuggingFaceTB/SmolLM2-135M-Instruct"}, rows
        browser.set_window_size(1280, 900)
        browser.get(server.url + "#view=training")
        wait(browser, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#training-rows tbody tr")) == len(rows))
        assert browser.find_element(By.ID, "tab-training").get_attribute("aria-selected") == "true"
        assert not browser.find_element(By.ID, "results").is_displayed()
        curves = browser.find_elements(By.CSS_SELECTOR, "#training-rows svg.loss-curve path.loss-tested")
        assert len(curves) == len([row for row in rows if row["train_losses"]])
        save(browser, "space-training.png")
        smollm2 = next(tr for tr in browser.find_elements(By.CSS_SELECTOR, "#training-rows tbody tr")
                       if tr.text.startswith("HuggingFaceTB/SmolLM2-135M-Instruct"))
        smollm2.find_element(By.CSS_SELECTOR, "button.link").click()
        wait(browser, lambda d: d.find_element(By.ID, "detail").is_displayed())
        assert browser.find_element(By.CSS_SELECTOR, "#training-curve svg path.loss-reference")
        assert browser.find_element(By.ID, "training-restart").text == "bit-identical"
        assert "the reference's" in browser.find_element(By.ID, "training-native").text
        assert "--workload train" in browser.find_element(By.ID, "detail-run").text
        assert "expected_losses = [" in browser.find_element(By.ID, "detail-script").get_attribute("textContent")
        save(browser, "space-training-detail.png")
    finally:
        code, stderr = server.stop()
    assert code == 0, stderr
