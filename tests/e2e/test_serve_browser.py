"""The Space in headless Chromium (Debian's chromium + chromium-driver, driven by Selenium): load
the page, switch views, tasks and version pairs, search, sort, open a model's detail and check
what is shown against the dataset read with pyarrow; keyboard use and a narrow screen. Saves
screenshots to test-artifacts/ (space.png: the page; space-image-text-to-text.png: that task's Selected
view; space-detail.png; space-compare.png; space-narrow.png)."""
import os
import shutil

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select, WebDriverWait

from conftest import REPO_ROOT
from space import ENGINE_GLOB, TORCH_PAIR, Space, make_dataset, read_pair

ARTIFACTS = REPO_ROOT / "test-artifacts"


@pytest.fixture(scope="module")
def space(canrun_bin, tmp_path_factory):
    results, catalog = make_dataset(canrun_bin, tmp_path_factory.mktemp("space"))
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
    """[(model id, result badge text)] of the table body, read in one step (the page may re-render)."""
    rows = driver.execute_script("return [...document.querySelectorAll('#rows tbody tr')]"
                                 ".map(tr => [tr.dataset.model, tr.querySelector('.badge').textContent]);")
    return [tuple(row) for row in rows]


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
    selected = ["test/tiny-llama", "test/tiny-qwen2", "test/tiny-qwen3", "test/tiny-mistral", "test/unknown-arch",
                "test/tiny-later"]
    wait_for_rows(browser, selected)
    assert browser.find_element(By.ID, "tab-selected").get_attribute("aria-selected") == "true"
    for model, badge in shown_rows(browser):
        expected = table[model]["result"] if model in table else "UNTESTED"
        assert badge.endswith(expected), (model, badge)
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
    assert "random weights" in llama_badge.get_attribute("title")
    # Each version pair's Parquet file is offered for download.
    links = browser.find_elements(By.CSS_SELECTOR, "#data-source a")
    assert sorted(a.text for a in links) == sorted(p.name for p in results.glob("*.parquet"))
    assert all(a.get_attribute("href").endswith("/data/" + a.text) for a in links)
    save(browser, "space.png")

    # Downloads: the whole ranking, excluded models with their reason.
    browser.find_element(By.ID, "tab-downloads").click()
    wait_for_rows(browser, selected[:5] + ["test/excluded", "test/tiny-later"])
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
    assert badge.endswith("PASS")
    save(browser, "space-image-text-to-text.png")
    browser.find_element(By.ID, "tab-downloads").click()
    Select(browser.find_element(By.ID, "task")).select_by_value("text-generation")

    # Search filters as you type.
    search = browser.find_element(By.ID, "search")
    search.send_keys("qwen")
    wait_for_rows(browser, ["test/tiny-qwen2", "test/tiny-qwen3"])
    search.send_keys(Keys.CONTROL, "a")
    search.send_keys(Keys.BACKSPACE)  # as a user clears it: an input event, unlike WebElement.clear()
    wait(browser, lambda d: len(shown_rows(d)) == 7)

    # Sorting by a column header, then back.
    browser.find_element(By.CSS_SELECTOR, 'th[data-sort="model_id"] button').click()
    wait_for_rows(browser, sorted(selected[:5] + ["test/excluded", "test/tiny-later"]))
    assert browser.find_element(By.CSS_SELECTOR, 'th[data-sort="model_id"]').get_attribute("aria-sort") == "ascending"

    # The other version pair.
    torch = read_pair(results, f"{TORCH_PAIR[0]}__{TORCH_PAIR[1]}.parquet")
    Select(browser.find_element(By.ID, "compiler")).select_by_value(TORCH_PAIR[0])
    wait(browser, lambda d: dict(shown_rows(d)).get("test/tiny-llama", "").endswith(torch["test/tiny-llama"]["result"]))
    assert browser.find_element(By.ID, "library").get_attribute("value") == TORCH_PAIR[1]
    Select(browser.find_element(By.ID, "compiler")).select_by_index(0)

    # A row's detail, opened from the keyboard: error, stack, packages, script with copy, plan cache.
    mistral = table["test/tiny-mistral"]
    wait(browser, lambda d: dict(shown_rows(d)).get("test/tiny-mistral", "").endswith("FAIL_RUNTIME"))
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
    assert dialog.find_element(By.ID, "detail-cache").text == "canrun cache pull SOURCE"
    assert f"run with {compiler}: " in dialog.text
    assert dialog.find_element(By.XPATH, ".//button[text()='Copy script']").is_displayed()
    save(browser, "space-detail.png")
    browser.switch_to.active_element.send_keys(Keys.ESCAPE)
    wait(browser, lambda d: not d.find_element(By.ID, "detail").get_attribute("open"))
    assert browser.switch_to.active_element.text == "test/tiny-mistral"  # focus returns to the row


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
            " ...[...tr.querySelectorAll('td')].slice(2, 5).map(td => td.textContent)]);")

    shown = diff_rows()
    assert shown, "no changed models between the torch and engine pairs"
    for model, older, newer, changes in shown:
        assert older.endswith(torch[model]["result"]) if model in torch else older == "no row"
        assert newer.endswith(engine[model]["result"]) if model in engine else newer == "no row"
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
        wait(browser, lambda d: len(shown_rows(d)) == 6)
        overflow = browser.execute_script(
            "return document.documentElement.scrollWidth - document.documentElement.clientWidth")
        assert overflow <= 0
        cell = browser.find_element(By.CSS_SELECTOR, '[data-model="test/tiny-llama"] td[data-label="Cores"]')
        assert cell.is_displayed()
        save(browser, "space-narrow.png")
    finally:
        browser.set_window_size(1280, 900)
