"""Shared pytest fixtures: where the repository and the canrun binary are."""
import os
import subprocess
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session", autouse=True)
def private_results_folder(tmp_path_factory):
    """`canrun check` records its row in $CANRUN_RESULTS (default results/ of the working folder),
    and serve, query and diff read it: every test gets one folder of its session's own, never
    the user's."""
    os.environ["CANRUN_RESULTS"] = str(tmp_path_factory.mktemp("results"))


@pytest.fixture(scope="session")
def canrun_bin() -> str:
    path = Path(os.environ.get("CANRUN_BIN", REPO_ROOT / "build" / "canrun"))
    if not path.is_file():
        pytest.fail(f"canrun binary not found at {path}; build it or set CANRUN_BIN")
    return str(path)


@pytest.fixture(scope="session")
def run_canrun(canrun_bin, tmp_path_factory):
    """Runs `canrun ARGS...` and returns the CompletedProcess (text mode). Plans compiled by
    the default cpu backend go to one plan cache for the session, not the user's."""
    env = dict(os.environ)
    env.setdefault("CANRUN_CACHE_DIR", str(tmp_path_factory.mktemp("plans")))

    def run(*args, check=False):
        return subprocess.run([canrun_bin, *map(str, args)], capture_output=True, text=True,
                              check=check, timeout=600, env=env)
    return run
