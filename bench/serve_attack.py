#!/usr/bin/env python3
"""Load test of `canrun serve` against slow and idle clients, loopback only.

Writes synthetic rows (tools/make_synthetic_results.py), starts the server on a free port and
drives normal traffic (CLIENTS concurrent clients, each sending GET /api/rows, one fresh
connection per request, for SECONDS) twice: alone, then with SLOW connections that send a
request line and then one header line every INTERVAL seconds without ever finishing, and IDLE
connections (half connect and send nothing, half send part of a request line), driven from a
second process so that their work does not delay the measuring client's own event loop. An
attacker the server closes reconnects at once, so the attack lasts the whole phase. Prints p50/p95/p99
and max latency of the normal requests for both phases, their failures, and what the
attackers saw (closed by the server, 503s).

With --model the server is the model server (`canrun serve MODEL`) instead, and each normal
client alternates GET /health and a short greedy POST /v1/completions (COMPLETION_TOKENS tokens),
reported apart.

    python3 bench/serve_attack.py                       # uses build/canrun
    python3 bench/serve_attack.py --canrun build-serve/canrun --slow 300 --idle 300 --seconds 20
    python3 bench/serve_attack.py --model models/SmolLM2-135M-Instruct --slow 300 --idle 300
"""
import json
import argparse
import asyncio
import multiprocessing
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# (label, method, path, body) of the normal requests, taken in turn.
SPACE_REQUESTS = [
    ("GET /api/rows", "GET", "/api/rows?view=tested&task=text-generation&sort=rank&order=asc&limit=200", None),
    ("GET /api/rows", "GET", "/api/rows?view=tested&task=text-generation&sort=wall_time_s&order=desc&limit=200", None),
    ("GET /api/rows", "GET", "/api/rows?view=downloads&task=text-generation&limit=500", None),
    ("GET /api/pairs", "GET", "/api/pairs", None),
]


def model_requests(completion_tokens):
    body = json.dumps({"prompt": "The capital of France is", "max_tokens": completion_tokens, "temperature": 0,
                       "ignore_eos": True})
    return [("GET /health", "GET", "/health", None),
            (f"POST /v1/completions ({completion_tokens} tokens)", "POST", "/v1/completions", body)]


def raise_descriptor_limit():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return hard


async def normal_request(port, request, timeout):
    """Seconds for one whole request on a fresh connection, or the reason it failed."""
    _, method, path, body = request
    start = time.perf_counter()
    try:
        reader, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port), timeout)
        try:
            content = f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n{body}" if body else "\r\n"
            writer.write(f"{method} {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n{content}".encode())
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout)
            status = int(head.split()[1])
            length = int(re.search(rb"Content-Length: (\d+)", head, re.IGNORECASE).group(1))
            await asyncio.wait_for(reader.readexactly(length), timeout)
        finally:
            writer.close()
    except (OSError, asyncio.TimeoutError, asyncio.IncompleteReadError) as error:
        return None, type(error).__name__
    return time.perf_counter() - start, None if status == 200 else f"status {status}"


async def normal_traffic(port, requests, clients, seconds, timeout):
    """Latencies and failures by request label."""
    latencies, failures = {}, {}
    deadline = time.monotonic() + seconds

    async def client(index):
        sent = index
        while time.monotonic() < deadline:
            request = requests[sent % len(requests)]
            latency, failure = await normal_request(port, request, timeout)
            sent += 1
            if failure:
                failures.setdefault(request[0], {})
                failures[request[0]][failure] = failures[request[0]].get(failure, 0) + 1
            else:
                latencies.setdefault(request[0], []).append(latency)

    await asyncio.gather(*(client(i) for i in range(clients)))
    return latencies, failures


class Attack:
    """SLOW and IDLE attacking connections, each reopened as soon as the server closes it."""

    def __init__(self, port, slow, idle, interval, path):
        self.port, self.slow, self.idle, self.interval, self.path = port, slow, idle, interval, path
        self.closed_by_server = 0
        self.refused_503 = 0
        self.connect_failures = 0
        self.open = 0
        self.stopping = False
        self.tasks = []

    async def attacker(self, kind, index):
        while not self.stopping:
            try:
                reader, writer = await asyncio.open_connection("127.0.0.1", self.port)
            except OSError:
                self.connect_failures += 1
                await asyncio.sleep(0.1)
                continue
            self.open += 1
            try:
                if kind == "slow":
                    writer.write(f"GET {self.path} HTTP/1.1\r\n".encode())
                elif index % 2:
                    writer.write(f"GET {self.path}"[:8].encode())  # part of a request line
                line = 0
                while not self.stopping:
                    try:
                        reply = await asyncio.wait_for(reader.read(4096), self.interval)
                    except asyncio.TimeoutError:
                        if kind == "slow":
                            writer.write(f"X-Slow-{line}: {'a' * 20}\r\n".encode())
                            line += 1
                        continue
                    if reply.startswith(b"HTTP/1.1 503"):
                        self.refused_503 += 1
                    self.closed_by_server += 1
                    break
            except OSError:
                self.closed_by_server += 1
            finally:
                self.open -= 1
                writer.close()

    async def run(self, ready, stop):
        """Attacks until `stop` is set; sets `ready` once every attacker has connected (or failed to)."""
        tasks = [asyncio.create_task(self.attacker("slow", i)) for i in range(self.slow)]
        tasks += [asyncio.create_task(self.attacker("idle", i)) for i in range(self.idle)]
        for _ in range(200):
            if self.open + self.connect_failures >= self.slow + self.idle:
                break
            await asyncio.sleep(0.05)
        ready.set()
        while not stop.is_set():
            await asyncio.sleep(0.05)
        still_open = self.open
        self.stopping = True
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        return {"open": still_open, "closed_by_server": self.closed_by_server, "refused_503": self.refused_503,
                "connect_failures": self.connect_failures}


def attack_process(port, slow, idle, interval, path, ready, stop, results):
    results.put(asyncio.run(Attack(port, slow, idle, interval, path).run(ready, stop)))


def percentile(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def report(phase, requests, latencies, failures):
    for label in dict.fromkeys(request[0] for request in requests):
        answered, failed = latencies.get(label, []), failures.get(label, {})
        if not answered:
            print(f"  {phase}, {label}: no request answered; failures {failed}")
            continue
        ms = [1000 * v for v in answered]
        print(f"  {phase}, {label}: {len(ms)} requests, p50 {percentile(ms, 50):.2f} ms, "
              f"p95 {percentile(ms, 95):.2f} ms, p99 {percentile(ms, 99):.2f} ms, max {max(ms):.2f} ms, "
              f"mean {statistics.mean(ms):.2f} ms; failures {failed or 'none'}")


async def measure(port, requests, args):
    print(f"normal traffic: {args.clients} clients, a fresh connection per request, {args.seconds:g} s per phase")
    latencies, failures = await normal_traffic(port, requests, args.clients, args.seconds, args.timeout)
    report("alone", requests, latencies, failures)
    spawn = multiprocessing.get_context("spawn")  # a fresh interpreter, not a fork of this event loop
    ready, stop, results = spawn.Event(), spawn.Event(), spawn.Queue()
    attacker = spawn.Process(target=attack_process,
                             args=(port, args.slow, args.idle, args.interval, requests[-1][2], ready, stop, results))
    attacker.start()
    try:
        ready.wait(15)
        print(f"attack: {args.slow} slow (a header line every {args.interval:g} s) + {args.idle} idle connections")
        latencies, failures = await normal_traffic(port, requests, args.clients, args.seconds, args.timeout)
    finally:
        stop.set()
    seen = results.get(timeout=30)
    attacker.join(10)
    report(f"with {args.slow} slow + {args.idle} idle open", requests, latencies, failures)
    print(f"  attackers: {seen['open']} open at the end, {seen['closed_by_server']} closed by the server "
          f"({seen['refused_503']} of them with 503), {seen['connect_failures']} connects failed")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--canrun", default=os.environ.get("CANRUN_BIN", str(REPO / "build" / "canrun")))
    parser.add_argument("--rows", type=int, default=10000, help="synthetic rows (default 10000)")
    parser.add_argument("--model", help="serve this model folder or Hub id (the model server) instead of the Space")
    parser.add_argument("--completion-tokens", type=int, default=4,
                        help="with --model: tokens of each normal completion (default 4)")
    parser.add_argument("--slow", type=int, default=300, help="slow connections (default 300)")
    parser.add_argument("--idle", type=int, default=300, help="idle connections (default 300)")
    parser.add_argument("--interval", type=float, default=2.0, help="seconds between a slow client's lines")
    parser.add_argument("--clients", type=int, default=4, help="concurrent normal clients (default 4)")
    parser.add_argument("--seconds", type=float, default=20.0, help="length of each phase (default 20)")
    parser.add_argument("--timeout", type=float, default=5.0, help="a normal request failing after (default 5)")
    parser.add_argument("serve_args", nargs="*", help="more `canrun serve` options, after --")
    args = parser.parse_args()
    if not 0 < args.slow + args.idle <= 20000 or not 0 < args.seconds <= 600 or not 0 < args.clients <= 64:
        parser.error("--slow + --idle must be 1..20000, --seconds 0..600, --clients 1..64")
    if not 0 < args.completion_tokens <= 512:
        parser.error("--completion-tokens must be 1..512")
    limit = raise_descriptor_limit()
    if limit < args.slow + args.idle + args.clients + 64:
        parser.error(f"--slow + --idle need more descriptors than this process may open ({limit}, ulimit -Hn)")

    with tempfile.TemporaryDirectory() as work:
        if args.model:
            served = [args.model]
            requests = model_requests(args.completion_tokens)
        else:
            results = Path(work) / "results"
            subprocess.run([sys.executable, str(REPO / "tools" / "make_synthetic_results.py"), "--out", str(results),
                            "--rows", str(args.rows)], check=True, capture_output=True)
            served = ["--data", str(results)]
            requests = SPACE_REQUESTS
        server = subprocess.Popen([args.canrun, "serve", *served, "--port", "0", *args.serve_args],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            line = server.stdout.readline()
            match = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
            if not match:
                sys.exit(f"no URL from the server: {line!r} {server.stderr.read()}")
            what = f"model {args.model}" if args.model else f"{args.rows} synthetic rows"
            print(f"server {args.canrun} on port {match.group(1)}, {what}")
            asyncio.run(measure(int(match.group(1)), requests, args))
        finally:
            server.terminate()
            server.wait(timeout=10)


if __name__ == "__main__":
    main()
