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
from analyzer.deliver.deflated import Deflated
from analyzer.deliver.server import Server


def serving(host: str, idle_timeout_s: float = server_mod.IDLE_TIMEOUT_S) -> Server:
    server = Server(
        host,
        0,
        lambda: Deflated.of([b"ebs_analyzer_up 1\n"]),
        lambda: (True, "ready"),
        None,
        idle_timeout_s,
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
    server = Server(
        "127.0.0.1", 0, lambda: Deflated.of([]), lambda: (True, "ready"), live=lambda: verdict[0]
    )
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

    def slow() -> Deflated:
        answering.set()
        release.wait(5)
        return Deflated.of([b"late 1\n"])

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


def exchange(port: int, request: bytes) -> tuple[str, dict[str, str], bytes]:
    """The status line, the headers and the body of the answer to `request`, sent whole."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as connection:
        connection.sendall(request)
        answer = b"".join(iter(lambda: connection.recv(65_536), b""))
    head, _, body = answer.partition(b"\r\n\r\n")
    status, *lines = head.decode("latin-1").split("\r\n")
    headers = dict(line.split(": ", 1) for line in lines)
    return status, headers, body


@pytest.mark.parametrize("path", ["/metrics", "/", "/healthz", "/nope"])
@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH", "OPTIONS"])
def test_methods_other_than_get_and_head_are_not_allowed_on_any_path(
    method: str, path: str
) -> None:
    server = serving("127.0.0.1")
    try:
        request = urllib.request.Request(
            f"http://127.0.0.1:{server.port}{path}", data=b"up=0", method=method
        )
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=5)
        assert refused.value.code == 405
        assert refused.value.headers["Allow"] == "GET, HEAD"
        assert refused.value.read() == f"method not allowed: {method}; try GET or HEAD\n".encode()
        status, headers, _ = exchange(
            server.port, f"{method} {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode()
        )
        assert status.endswith(" 405 Method Not Allowed") and headers["Allow"] == "GET, HEAD"
    finally:
        server.stop()


def test_get_and_head_are_answered_and_head_without_the_body() -> None:
    server = serving("127.0.0.1")
    try:
        for path, body in [("/metrics", b"ebs_analyzer_up 1\n"), ("/readyz", b"ready\n")]:
            status, headers, got = exchange(
                server.port, f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode()
            )
            assert status.endswith(" 200 OK") and got == body
            assert "Allow" not in headers
            status, headers, got = exchange(
                server.port, f"HEAD {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode()
            )
            assert status.endswith(" 200 OK") and got == b""
            assert headers["Content-Length"] == str(len(body))
    finally:
        server.stop()


def test_a_client_that_keeps_its_connection_goes_on_after_a_refusal() -> None:
    import http.client

    server = serving("127.0.0.1")
    try:
        client = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
        for method, status, body in [
            ("GET", 200, b"ebs_analyzer_up 1\n"),
            ("POST", 405, b"method not allowed: POST; try GET or HEAD\n"),
            ("HEAD", 200, b""),
            ("DELETE", 405, b"method not allowed: DELETE; try GET or HEAD\n"),
            ("GET", 200, b"ebs_analyzer_up 1\n"),
        ]:
            client.request(method, "/metrics", headers={"Connection": "keep-alive"})
            response = client.getresponse()
            assert (response.status, response.read()) == (status, body)
        client.close()
    finally:
        server.stop()


def test_a_refused_request_with_a_large_body_still_gets_its_answer() -> None:
    server = serving("127.0.0.1")
    try:
        request = urllib.request.Request(
            f"http://127.0.0.1:{server.port}/metrics", data=b"x" * 4_000_000, method="POST"
        )
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=5)
        assert refused.value.code == 405
    finally:
        server.stop()


def metrics_answer(server: Server, method: str = "GET", **headers: str) -> tuple[dict, bytes]:
    request = urllib.request.Request(
        f"http://127.0.0.1:{server.port}/metrics", method=method, headers=headers
    )
    with urllib.request.urlopen(request, timeout=5) as answer:
        return dict(answer.headers.items()), answer.read()


def test_metrics_are_sent_gzipped_to_a_scraper_that_asks_as_prometheus_does() -> None:
    import gzip

    text = b"".join(
        b'ebs_analyzer_volume_iops{volume_id="vol-%06d"} 1.0\n' % n for n in range(5_000)
    )
    server = Server(
        "127.0.0.1", 0, lambda: Deflated.of([text]).followed_by(b"up 1\n"), lambda: (True, "ok")
    )
    server.start()
    try:
        headers, body = metrics_answer(server, **{"Accept-Encoding": "gzip"})
        assert headers["Content-Encoding"] == "gzip"
        assert headers["Vary"] == "Accept-Encoding"
        assert int(headers["Content-Length"]) == len(body) < len(text) / 10
        assert gzip.decompress(body) == text + b"up 1\n"
        headers, body = metrics_answer(server)
        assert "Content-Encoding" not in headers
        assert int(headers["Content-Length"]) == len(body)
        assert body == text + b"up 1\n"
        headers, body = metrics_answer(server, "HEAD", **{"Accept-Encoding": "gzip"})
        assert body == b"" and int(headers["Content-Length"]) < len(text) / 10
    finally:
        server.stop()


def _with_actions(answer: tuple[int, str] = (200, "")) -> tuple[Server, list[bytes]]:
    got: list[bytes] = []

    def actions(headers, body: bytes) -> tuple[int, str]:
        got.append(body)
        return answer

    server = Server(
        "127.0.0.1",
        0,
        lambda: Deflated.of([b"ebs_analyzer_up 1\n"]),
        lambda: (True, "ready"),
        None,
        actions=actions,
    )
    server.start()
    return server, got


def test_slack_actions_take_a_post_with_its_whole_body_and_nothing_else() -> None:
    server, got = _with_actions((401, "invalid signature or timestamp\n"))
    try:
        body = b"payload=" + b"x" * 5000
        request = (
            b"POST /slack/actions HTTP/1.1\r\nHost: x\r\nContent-Type: "
            b"application/x-www-form-urlencoded\r\nContent-Length: "
            + str(len(body)).encode()
            + b"\r\nConnection: close\r\n\r\n"
            + body
        )
        status, _, text = exchange(server.port, request)
        assert status.endswith(" 401 Unauthorized") and text.startswith(b"invalid signature")
        assert got == [body]
        status, headers, _ = exchange(
            server.port, b"GET /slack/actions HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
        )
        assert status.endswith("405 Method Not Allowed") and headers["Allow"] == "POST"
        big = b"POST /slack/actions HTTP/1.1\r\nHost: x\r\nContent-Length: 70000\r\n\r\n"
        status, _, _ = exchange(server.port, big + b"x" * 70_000)
        assert status.endswith("413 Content Too Large") and len(got) == 1
    finally:
        server.stop()


def test_bodies_that_trickle_in_hold_no_worker() -> None:
    """More slow POSTs than there are workers, each announcing a body and sending a byte of
    it: the other endpoints answer at once, and each POST is handed over once it has all
    come."""
    server, got = _with_actions()
    slow = []
    try:
        for _ in range(server_mod.WORKERS + 2):
            connection = socket.create_connection(("127.0.0.1", server.port), timeout=5)
            connection.sendall(
                b"POST /slack/actions HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\nx"
            )
            slow.append(connection)
        started = time.monotonic()
        with urllib.request.urlopen(f"http://127.0.0.1:{server.port}/healthz", timeout=5) as r:
            assert r.status == 200
        assert time.monotonic() - started < 2.0
        assert got == []
        for connection in slow:
            connection.sendall(b"yz!")
        deadline = time.monotonic() + 5
        while len(got) < len(slow) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert got == [b"xyz!"] * len(slow)
    finally:
        for connection in slow:
            connection.close()
        server.stop()
