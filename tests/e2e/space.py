"""Shared by the Space tests: a realistic dataset (a real sweep over tiny configs, plus an older
version pair of synthetic rows from tools/make_synthetic_results.py) and a running `canrun serve`."""
import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pyarrow.parquet as pq

from conftest import REPO_ROOT

FIXTURES = REPO_ROOT / "tests" / "fixtures" / "models"
ENGINE_GLOB = "canrun-*__cpu-*.parquet"
TORCH_PAIR = ("torch-2.5.1", "transformers-4.46.0")
SOURCE = "https://example.org/downloads-snapshot"


def entry(model_id, model_type, config, rank, selected=True, exclusion=None, task="text-generation", license=None):
    downloads = {"rank": rank, "count": 1000 - rank, "as_of": "2026-05-12", "source": SOURCE}
    result = {"id": model_id, "task": task, "model_type": model_type, "config": config,
              "popularity": {"downloads": downloads, "trending": {"rank": None, "note": "no trending rank in this test"}},
              "selected": selected, "exclusion": exclusion}
    if license is not None:
        result["license"] = license
    return result


def config(name):
    return json.loads((FIXTURES / name / "config.json").read_text())


def write_catalog(path, entries):
    path.write_text("".join(json.dumps(e) + "\n" for e in entries))


def huge_config():
    """A llama config of about 2 trillion parameters: no device profile holds it, so its check plans
    the cores, finds none and records NOT_TESTED at once, before any weights are made."""
    return dict(config("llama_f32"), hidden_size=16384, intermediate_size=65536, num_hidden_layers=512,
                num_attention_heads=128, num_key_value_heads=8, head_dim=128)


def make_dataset(canrun_bin, root: Path, extra=()):
    """results/ with the engine pair (newest) and a torch pair; catalog.jsonl for `serve`. `extra`:
    more catalog entries for the sweep (after the others)."""
    swept = [entry("test/tiny-llama", "llama", config("llama_bf16"), 1),
             entry("test/tiny-qwen2", "qwen2", config("qwen2"), 2),
             entry("test/tiny-qwen3", "qwen3", config("qwen3_bf16"), 3),
             entry("test/tiny-mistral", "mistral", config("mistral_f32"), 4),
             entry("test/unknown-arch", "test_unknown_arch", {"hidden_size": 64}, 5),
             entry("test/excluded", "qwen3", config("qwen3_bf16"), 6, False, "not prioritized yet"),
             entry("test/tiny-vlm", "test_unknown_vlm", {"hidden_size": 64}, 1, False, "not prioritized yet",
                   task="image-text-to-text"),
             entry("test/tiny-qwen3-vl", "qwen3_vl", config("qwen3_vl"), 2, task="image-text-to-text"),
             *extra]
    results = root / "results"
    sweep_catalog = root / "sweep_catalog.jsonl"
    write_catalog(sweep_catalog, swept)
    env = dict(os.environ, XDG_CACHE_HOME=str(root / "xdg"), HF_HUB_CACHE=str(root / "hub"),
               CANRUN_CHECK_FAULT="crash:test/tiny-mistral")
    subprocess.run([canrun_bin, "sweep", "--all", "--catalog", str(sweep_catalog), "--out", str(results),
                    "--timeout", "120"], env=env, check=True, capture_output=True, timeout=300)
    # A selected model the sweep has not reached yet: listed as untested, with the reason.
    catalog = root / "catalog.jsonl"
    write_catalog(catalog, swept + [entry("test/tiny-later", "llama", config("llama_f32"), 7)])
    subprocess.run([sys.executable, str(REPO_ROOT / "tools" / "make_synthetic_results.py"), "--out", str(results),
                    "--catalog", str(catalog), "--compiler", TORCH_PAIR[0], "--library", TORCH_PAIR[1],
                    "--days-ago", "30"], check=True, capture_output=True, timeout=120)
    return results, catalog


def read_pair(results, pattern):
    """{model_id: row dict} of the one file matching `pattern`, through pyarrow."""
    [path] = results.glob(pattern)
    return {row["model_id"]: row for row in pq.read_table(path).to_pylist()}


class Space:
    """`canrun serve` on a free port; stops it with SIGTERM and checks that it exits cleanly."""

    def __init__(self, canrun_bin, results, catalog, *extra, env=None):
        """`results` None: no --data, so serve reads its default folders ($CANRUN_DATASET and
        $CANRUN_RESULTS of `env`)."""
        data = [] if results is None else ["--data", str(results)]
        self.process = subprocess.Popen(
            [canrun_bin, "serve", *data, "--catalog", str(catalog), "--port", "0", "--reload-interval", "0.2",
             *extra],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        line = self.process.stdout.readline()
        match = re.search(r"(http://127\.0\.0\.1:\d+/)", line)
        if not match:
            self.process.kill()
            raise AssertionError(f"no URL in {line!r}; stderr: {self.process.stderr.read()}")
        self.url = match.group(1)
        self.port = int(self.url.rsplit(":", 1)[1].strip("/"))

    def get(self, path):
        """(status, parsed JSON body or text, headers)."""
        try:
            with urllib.request.urlopen(self.url.rstrip("/") + path, timeout=10) as response:
                status, body, headers = response.status, response.read(), response.headers
        except urllib.error.HTTPError as error:
            status, body, headers = error.code, error.read(), error.headers
        if headers.get_content_type() == "application/json":
            return status, json.loads(body), headers
        return status, body.decode(), headers

    def stop(self):
        self.process.send_signal(signal.SIGTERM)
        try:
            code = self.process.wait(timeout=10)
        finally:
            if self.process.poll() is None:
                self.process.kill()
        return code, self.process.stderr.read()


def wait_for(predicate, timeout=10.0):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if predicate():
            return True
        time.sleep(0.1)
    return False
