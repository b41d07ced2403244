"""Download speed of `canrun pull` and huggingface_hub's snapshot_download side by side, from the
local fake Hub (tests/e2e/fake_hub.py) over loopback, for one large LFS file.

    python3 bench/hub_pull_speed.py [--size-mb 500] [--canrun build/canrun]

Prints each tool's seconds and MB/s (best of --runs) and the ratio. Both write into a fresh cache
each run and both verify the blob's sha256 after the transfer."""
import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "e2e"))
from fake_hub import FakeHub, Repo  # noqa: E402

REPO_ID = "bench-org/large"


def timed(command, env):
    start = time.perf_counter()
    subprocess.run(command, check=True, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=int, default=500)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--canrun", default=str(ROOT / "build" / "canrun"))
    args = parser.parse_args()
    data = os.urandom(args.size_mb * 1_000_000)
    with FakeHub({REPO_ID: Repo({"config.json": b"{}", "model.safetensors": data})}) as hub, \
            tempfile.TemporaryDirectory() as scratch:
        env = {k: v for k, v in os.environ.items() if not k.startswith("HF_")}
        env.update(HF_ENDPOINT=hub.url, HF_HUB_DISABLE_PROGRESS_BARS="1", HF_HUB_DISABLE_XET="1")
        tools = {
            "canrun pull": lambda cache: [args.canrun, "pull", REPO_ID],
            "huggingface_hub snapshot_download": lambda cache: [
                sys.executable, "-c", "import sys; from huggingface_hub import snapshot_download; "
                "snapshot_download(sys.argv[1])", REPO_ID],
        }
        best = {}
        for run in range(args.runs):
            for name, command in tools.items():
                cache = Path(scratch) / f"{run}-{len(best)}-{name.split()[0]}"
                seconds = timed(command(cache), dict(env, HF_HUB_CACHE=str(cache)))
                best[name] = min(best.get(name, seconds), seconds)
                subprocess.run(["rm", "-rf", str(cache)], check=True)
        for name, seconds in best.items():
            print(f"{name:36s} {seconds:7.2f} s  {args.size_mb / seconds:8.1f} MB/s")
        canrun, hub_s = best["canrun pull"], best["huggingface_hub snapshot_download"]
        print(f"canrun pull is {hub_s / canrun:.2f}x the speed of huggingface_hub ({args.size_mb} MB, best of "
              f"{args.runs}, loopback)")


if __name__ == "__main__":
    main()
