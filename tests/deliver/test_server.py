"""The HTTP endpoints: many scrapers at once, idle connections closed, IPv6."""

from __future__ import annotations

import socket
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import pytest

from analyzer import settings
from analyzer.deliver import server as server_mod
from analyzer.deliver.server import Server


def serving(host: str, idle_timeout_s: float = server_mod.IDLE_TIMEOUT_S) -> Server:
    server = Server(
        host, 0, lambda: b"ebs_analyzer_up 1\n", lambda: (True, "ready"), None, idle_timeout_s
    )
    server.start()
    return server


def test_many_scrapers_at_once_are_all_answered() -> None:
    server = serving("127.0.0.1")
    try:
        url = f"http://127.0.0.1:{server.port}/metrics"
        with ThreadPoolExecutor(64) as pool:
            bodies = list(
                pool.map(lambda _: urllib.request.urlopen(url, timeout=5).read(), range(256))
            )
        assert set(bodies) == {b"ebs_analyzer_up 1\n"}
    finally:
        server.stop()


def test_an_idle_connection_is_closed() -> None:
    server = serving("127.0.0.1", idle_timeout_s=0.2)
    try:
        idle = socket.create_connection(("127.0.0.1", server.port))
        idle.settimeout(5)
        started = time.monotonic()
        assert idle.recv(1) == b""  # closed by the server, not by us
        assert time.monotonic() - started < 4
    finally:
        server.stop()


def test_ipv6_listen_addresses_work() -> None:
    config = settings.load({"region": ["us-east-1"], "listen": "[::1]:0"})
    host, port = config.listen_address
    assert (host, port) == ("::1", 0)
    server = serving(host)
    try:
        body = urllib.request.urlopen(f"http://[::1]:{server.port}/readyz", timeout=5).read()
        assert body == b"ready\n"
    finally:
        server.stop()


@pytest.mark.parametrize("listen", ["::1:9877", "[nothost]:9877"])
def test_a_malformed_ipv6_listen_address_is_refused_when_parsed(listen: str) -> None:
    from analyzer.errors import ConfigError

    with pytest.raises(ConfigError, match="IPv6"):
        settings.load({"region": ["us-east-1"], "listen": listen})


def test_livez_answers_what_the_liveness_check_says() -> None:
    import urllib.error

    verdict = [(True, "alive")]
    server = Server("127.0.0.1", 0, lambda: b"", lambda: (True, "ready"), live=lambda: verdict[0])
    server.start()
    try:
        url = f"http://127.0.0.1:{server.port}/livez"
        assert urllib.request.urlopen(url, timeout=5).read() == b"alive\n"
        verdict[0] = (False, "not alive: the last cycle ended 2000 s ago")
        with pytest.raises(urllib.error.HTTPError) as failed:
            urllib.request.urlopen(url, timeout=5)
        assert failed.value.code == 503
        assert failed.value.read() == b"not alive: the last cycle ended 2000 s ago\n"
    finally:
        server.stop()


def test_idle_connections_hold_no_thread_and_are_closed_after_the_timeout() -> None:
    """300 connections that send nothing, or half a request: /metrics is still answered
    within a second, the threads stay few, and each idle one is closed after the timeout."""
    import threading

    timeout_s = 3.0
    server = serving("127.0.0.1", idle_timeout_s=timeout_s)
    idle: list[socket.socket] = []
    try:
        for n in range(300):
            connection = socket.create_connection(("127.0.0.1", server.port), timeout=5)
            if n % 3 == 0:
                connection.sendall(b"GET /metrics HTTP/1.1\r\nHost: scraper\r\n")
            idle.append(connection)
        opened = time.monotonic()
        url = f"http://127.0.0.1:{server.port}/metrics"
        started = time.monotonic()
        assert urllib.request.urlopen(url, timeout=5).read() == b"ebs_analyzer_up 1\n"
        assert time.monotonic() - started < 1.0
        assert threading.active_count() < 30
        for connection in idle:  # still open: nothing to read, and no end of file
            connection.setblocking(False)
            with pytest.raises(BlockingIOError):
                connection.recv(1)
        for connection in idle:
            connection.settimeout(timeout_s + 5)
            assert connection.recv(1) == b""  # closed by the server, not by us
        assert timeout_s - 1 < time.monotonic() - opened < timeout_s + 4
    finally:
        for connection in idle:
            connection.close()
        server.stop()


def test_head_and_get_are_answered_as_before_and_a_request_split_in_pieces_too() -> None:
    server = serving("127.0.0.1")
    try:
        with socket.create_connection(("127.0.0.1", server.port), timeout=5) as connection:
            connection.sendall(b"HEAD /healthz HTTP/1.0\r\n")
            time.sleep(0.1)
            connection.sendall(b"Host: x\r\n\r\n")
            answer = b"".join(iter(lambda: connection.recv(4096), b""))
        assert answer.startswith(b"HTTP/1.0 200 OK\r\n")
        request = urllib.request.Request(f"http://127.0.0.1:{server.port}/nope")
        with pytest.raises(urllib.error.HTTPError) as missing:
            urllib.request.urlopen(request, timeout=5)
        assert missing.value.code == 404
    finally:
        server.stop()


def test_stop_lets_a_request_being_answered_finish() -> None:
    import threading

    answering, release = threading.Event(), threading.Event()

    def slow() -> bytes:
        answering.set()
        release.wait(5)
        return b"late 1\n"

    server = Server("127.0.0.1", 0, slow, lambda: (True, "ready"))
    server.start()
    url = f"http://127.0.0.1:{server.port}/metrics"
    with ThreadPoolExecutor(1) as pool:
        scrape = pool.submit(lambda: urllib.request.urlopen(url, timeout=5).read())
        assert answering.wait(5)
        stopper = threading.Thread(target=server.stop)
        stopper.start()
        time.sleep(0.1)
        release.set()
        stopper.join(5)
        assert not stopper.is_alive()
        assert scrape.result(5) == b"late 1\n"
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", server.port), timeout=1)
