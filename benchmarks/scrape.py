"""/metrics under many scrapers at once, side by side with a bare standard-library server.

    .venv/bin/python benchmarks/scrape.py --clients 64 --rounds 50

The daemon's HTTP server serves the exposition of the built-in demo's account (its first
cycle, the daemon's own metrics included); a bare `http.server.ThreadingHTTPServer` with the
standard library's defaults (a listen backlog of 5) serves the same bytes. Both run in a
process of their own. In each round, `--clients` scrapers (threads of this process) open a new
connection at the same moment, as scrapers whose intervals line up do, and fetch /metrics.
Each asks for gzip, as Prometheus does (the bare server sends the text as it is). Reported per
server: the latency percentiles of a scrape over all rounds, and the scrapes that failed.
"""

from __future__ import annotations

import argparse
import http.client
import multiprocessing
import statistics
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from multiprocessing.queues import Queue
from multiprocessing.synchronize import Event
from typing import Any

from analyzer import logs
from analyzer import settings as settings_mod
from analyzer.analyze import rules
from analyzer.deliver.deflated import Deflated
from analyzer.deliver.exporter import Published, exposition_for
from analyzer.deliver.server import Server
from analyzer.live.cycle import Analyzer
from analyzer.sim.account import account


def demo_exposition() -> bytes:
    with account(datetime.now(UTC)) as simulated:
        settings = settings_mod.load({"region": ["us-east-1"]})
        result = Analyzer(settings, rules.load(), connect=simulated.region).run(simulated.now)
    published = Published.of(result.readings, [])
    exposition, _ = exposition_for(lambda: published)
    return exposition().text()


def bare_server(body: bytes) -> tuple[ThreadingHTTPServer, int]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *_args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, int(server.server_address[1])


def hammer(port: int, clients: int, rounds: int) -> tuple[list[float], int]:
    """Latencies of the scrapes answered, and how many failed."""
    barrier = threading.Barrier(clients)

    def one(_: int) -> float | None:
        barrier.wait()
        started = time.perf_counter()
        try:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            connection.request("GET", "/metrics", headers={"Accept-Encoding": "gzip"})
            answer = connection.getresponse()
            answer.read()
            connection.close()
        except OSError:
            return None
        return time.perf_counter() - started if answer.status == 200 else None

    results: list[float | None] = []
    with ThreadPoolExecutor(clients) as pool:
        for _ in range(rounds):
            results += pool.map(one, range(clients))
    answered = [r for r in results if r is not None]
    return answered, len(results) - len(answered)


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(int(share * len(ordered)), len(ordered) - 1)]


def report(name: str, latencies: list[float], failed: int) -> None:
    ms: Callable[[float], str] = lambda s: f"{s * 1000:7.1f} ms"  # noqa: E731
    print(
        f"{name:<22} p50 {ms(statistics.median(latencies))}  p90 {ms(percentile(latencies, 0.9))}"
        f"  p99 {ms(percentile(latencies, 0.99))}  max {ms(max(latencies))}  failed {failed}"
    )


def serve(ports: Queue[Any], stop: Event) -> None:
    """The two servers, in a process of their own: the scrapers do not share their GIL."""
    logs.configure("warning")
    body = demo_exposition()
    text = Deflated.of([body])
    ours = Server("127.0.0.1", 0, lambda: text, lambda: (True, "ready"))
    ours.start()
    bare, bare_port = bare_server(body)
    ports.put((len(body), ours.port, bare_port))
    stop.wait()
    ours.stop()
    bare.shutdown()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=50)
    args = parser.parse_args()
    ports: Queue[Any] = multiprocessing.Queue()
    stop = multiprocessing.Event()
    servers = multiprocessing.Process(target=serve, args=(ports, stop), daemon=True)
    servers.start()
    size, ours, bare = ports.get(timeout=120)
    print(f"exposition: {size:,} bytes; {args.clients} scrapers at once, {args.rounds} rounds")
    for name, port in (("analyzer", ours), ("bare http.server", bare)):
        hammer(port, args.clients, 2)  # warm up
        report(name, *hammer(port, args.clients, args.rounds))
    stop.set()
    servers.join(10)


if __name__ == "__main__":
    main()
