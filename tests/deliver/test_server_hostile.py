"""What a hostile client sends the HTTP server: requests that trickle in, bodies that lie
about their length, bytes that are not ASCII, floods of connections. Each is answered 4xx
(or closed) in bounded time, with one log line and never a traceback. Loopback only."""

from __future__ import annotations

import socket
import time
import urllib.request
from urllib.parse import urlencode

import pytest
from structlog.testing import capture_logs

from analyzer.deliver import server as server_mod
from analyzer.deliver.deflated import Deflated
from analyzer.deliver.interactions import Click, Interactions
from analyzer.deliver.server import Server
from tests.deliver.test_interactions import SECRET, _body, _headers


def _serving(actions=None, **limits) -> Server:
    server = Server(
        "127.0.0.1",
        0,
        lambda: Deflated.of([b"ebs_analyzer_up 1\n"]),
        lambda: (True, "ready"),
        actions=actions,
        **limits,
    )
    server.start()
    return server


def _answer(connection: socket.socket) -> bytes:
    return b"".join(iter(lambda: connection.recv(65_536), b""))


def _status(answer: bytes) -> int:
    return int(answer.split(b" ", 2)[1]) if answer else 0


def _post(port: int, head: bytes, body: bytes = b"") -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=5) as connection:
        connection.sendall(b"POST /slack/actions HTTP/1.1\r\nHost: x\r\n" + head + body)
        return _answer(connection)


def _scraped_within(server: Server, seconds: float) -> bool:
    started = time.monotonic()
    url = f"http://127.0.0.1:{server.port}/metrics"
    with urllib.request.urlopen(url, timeout=seconds + 1) as answer:
        body = answer.read()
    return body == b"ebs_analyzer_up 1\n" and time.monotonic() - started < seconds


@pytest.fixture
def no_traceback(capfd):
    yield
    assert "Traceback" not in capfd.readouterr().err


def test_a_request_that_trickles_in_is_answered_408_at_the_request_timeout(no_traceback):
    server = _serving(request_timeout_s=1.0)
    try:
        with capture_logs() as logs:
            connection = socket.create_connection(("127.0.0.1", server.port), timeout=5)
            started = time.monotonic()
            connection.setblocking(False)
            for byte in b"GET /metrics HTTP/1.1\r\nHost: slow\r\n":  # a byte every 0.1 s
                try:
                    connection.send(bytes([byte]))
                except OSError:
                    break
                time.sleep(0.1)
                if time.monotonic() - started > 4:
                    break
            connection.settimeout(5)
            answer = _answer(connection)
            connection.close()
        assert answer.startswith(b"HTTP/1.1 408 Request Timeout\r\n")
        assert answer.endswith(b"the request did not come in time\n")
        assert time.monotonic() - started < 4  # not reset by each byte
        assert [e["event"] for e in logs] == ["http.request_timeout"]
    finally:
        server.stop()


def test_a_long_head_handed_over_before_it_ended_is_bounded_too(no_traceback):
    """A head longer than the loop reads is handed to a worker as it is: the worker reads
    the rest before the same deadline, so a trickle cannot hold it either."""
    server = _serving(request_timeout_s=1.0)
    try:
        headers = b"".join(b"X-%d: %s\r\n" % (n, b"y" * 1400) for n in range(95))
        assert len(headers) > server_mod.MAX_HEAD_BYTES
        with socket.create_connection(("127.0.0.1", server.port), timeout=5) as connection:
            started = time.monotonic()
            connection.sendall(b"GET /metrics HTTP/1.1\r\n" + headers)
            connection.setblocking(False)
            while time.monotonic() - started < 4:
                try:
                    connection.send(b"Z")
                except OSError:
                    break
                time.sleep(0.1)
            stopped = time.monotonic() - started
            connection.settimeout(5)
            try:
                answer = _answer(connection)
            except ConnectionResetError:  # closed while the trickle went on
                answer = b""
        assert stopped < 4
        assert _status(answer) in (0, 408)  # answered 408, or closed
        assert _scraped_within(server, 2.0)
    finally:
        server.stop()


def _signed_post(port: int, body: bytes, **headers: str) -> bytes:
    lines = {**_headers(body, stamp=time.time()), "Content-Length": str(len(body)), **headers}
    head = b"".join(f"{k}: {v}\r\n".encode() for k, v in lines.items()) + b"\r\n"
    return _post(port, head, body)


class _Clicks(list):
    def __call__(self, click: Click) -> None:
        self.append(click)


@pytest.fixture
def slack(no_traceback):
    clicks = _Clicks()
    interactions = Interactions(SECRET, clicks)
    server = _serving(interactions.handle, request_timeout_s=1.0)
    yield server, clicks
    server.stop()
    interactions.drain()


@pytest.mark.parametrize(
    ("body", "why"),
    [
        (_body(actions=5), "actions a number"),
        (_body(actions=[1, "x"]), "actions a list of non-objects"),
        (_body(user="U1"), "user a string"),
        (urlencode({"payload": "{broken"}).encode(), "payload not JSON"),
        (b"payload=\xff\xfe", "a body that is not UTF-8"),
        (b"nothing=here", "a form without payload"),
    ],
)
def test_a_signed_body_of_the_wrong_shape_is_400_over_http(slack, body, why) -> None:
    server, clicks = slack
    with capture_logs() as logs:
        answer = _signed_post(server.port, body)
    assert _status(answer) == 400, why
    assert [e["event"] for e in logs] == ["slack.unreadable"]
    assert clicks == []


def test_a_signed_click_still_goes_through(slack) -> None:
    server, clicks = slack
    assert _status(_signed_post(server.port, _body())) == 200
    deadline = time.monotonic() + 5
    while not clicks and time.monotonic() < deadline:
        time.sleep(0.02)
    assert [c.fix_id for c in clicks] == ["vol-1:type=gp3"]


@pytest.mark.parametrize(
    ("head", "why"),
    [
        (b"X-Slack-Signature: v0=\xc3\xa9\xff" + b"0" * 60 + b"\r\n", "a signature not ASCII"),
        (b"X-Slack-Request-Timestamp: \xef\xbc\x91\r\n", "a timestamp not ASCII"),
        (b"X-\xff\xfe: \x80\x81\r\n", "another header not ASCII, beside a valid signature"),
    ],
)
def test_headers_that_are_not_ascii_are_401_or_beside_the_point(slack, head, why) -> None:
    server, clicks = slack
    body = _body()
    signed = _headers(body, stamp=time.time())
    lines = {"Content-Length": str(len(body)), **signed}
    name = head.split(b":", 1)[0].decode("latin-1")
    lines.pop(name, None)
    raw = b"".join(f"{k}: {v}\r\n".encode() for k, v in lines.items()) + head + b"\r\n"
    with capture_logs() as logs:
        answer = _post(server.port, raw, body)
    expected = 200 if name.startswith("X-\xff") else 401  # signed all the same: a click
    assert _status(answer) == expected, why
    assert [e["event"] for e in logs] == ([] if expected == 200 else ["slack.refused"])
    if expected == 401:
        time.sleep(0.1)
        assert clicks == []


def test_a_body_shorter_than_its_content_length_is_408_in_bounded_time(slack) -> None:
    server, clicks = slack
    body = _body()
    signed = _headers(body, stamp=time.time())
    head = (
        b"".join(f"{k}: {v}\r\n".encode() for k, v in signed.items())
        + f"Content-Length: {len(body) + 10}\r\n\r\n".encode()
    )
    started = time.monotonic()
    with capture_logs() as logs:
        answer = _post(server.port, head, body)
    assert _status(answer) == 408 and time.monotonic() - started < 3
    assert [e["event"] for e in logs] == ["http.request_timeout"]
    assert clicks == []


def test_a_body_longer_than_its_content_length_is_cut_there_and_refused(slack) -> None:
    server, clicks = slack
    body = _body()
    signed = _headers(body, stamp=time.time())
    head = (
        b"".join(f"{k}: {v}\r\n".encode() for k, v in signed.items())
        + f"Content-Length: {len(body) - 10}\r\n\r\n".encode()
    )
    with capture_logs() as logs:
        answer = _post(server.port, head, body)
    assert _status(answer) == 401  # what was signed is not what was sized
    assert [e["event"] for e in logs] == ["slack.refused"]
    assert clicks == []


@pytest.mark.parametrize(
    ("head", "status"),
    [
        (b"Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n", 411),
        (b"Transfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\nhello", 411),
        (b"Content-Length: five\r\n\r\n", 400),
        (b"Content-Length: -5\r\n\r\n", 400),
        (b"Content-Length: 5, 5\r\n\r\nhello", 400),
        (b"Content-Length: " + b"9" * 5000 + b"\r\n\r\n", 413),
        (b"Content-Length: 00000000000000000005\r\n\r\nhello", 401),
    ],
)
def test_bodies_not_sized_as_slack_sizes_them_are_4xx_with_one_line(slack, head, status):
    server, clicks = slack
    started = time.monotonic()
    with capture_logs() as logs:
        answer = _post(server.port, head)
    assert _status(answer) == status and time.monotonic() - started < 3
    assert len([e for e in logs if e["log_level"] in ("warning", "error")]) == 1
    assert clicks == []


def test_a_fault_in_an_endpoint_is_500_with_one_line(no_traceback) -> None:
    def broken(headers, body):
        raise RuntimeError("a bug")

    server = _serving(broken)
    try:
        with capture_logs() as logs:
            answer = _post(server.port, b"Content-Length: 2\r\n\r\n", b"{}")
        assert _status(answer) == 500
        assert [(e["event"], e["error"]) for e in logs] == [("http.failed", "RuntimeError: a bug")]
        assert _scraped_within(server, 2.0)
    finally:
        server.stop()


def _flood(port: int, count: int, first: bytes = b"") -> list[socket.socket]:
    flood = []
    for _ in range(count):
        connection = socket.create_connection(("127.0.0.1", port), timeout=5)
        if first:
            connection.sendall(first)
        flood.append(connection)
    return flood


def _closed_by_server(connection: socket.socket) -> bool:
    connection.setblocking(False)
    try:
        return connection.recv(1) == b""
    except BlockingIOError:
        return False
    except ConnectionResetError:
        return True


@pytest.mark.parametrize("first", [b"", b"G"], ids=["idle", "begun"])
def test_a_flood_of_connections_past_the_cap_keeps_no_scrape_out(no_traceback, first):
    """The cap's worth of connections held open (idle, or with a request begun), then more:
    /metrics is still answered at once (its connection is the newest, and the oldest are
    closed to make room), and the server holds no more than the cap. Said in a line a
    second, not a line per connection."""
    cap = server_mod.MAX_CONNECTIONS
    server = _serving()
    flood: list[socket.socket] = []
    try:
        with capture_logs() as logs:
            flood = _flood(server.port, cap, first)
            assert _scraped_within(server, 2.0)
            flood += _flood(server.port, 20, first)
            assert _scraped_within(server, 2.0)
            time.sleep(0.2)
            closed = [n for n, c in enumerate(flood) if _closed_by_server(c)]
        # Room was made for 20 of the flood and the two scrapes, oldest first.
        assert 20 <= len(closed) <= 22 and closed == list(range(len(closed)))
        full = [e for e in logs if e["event"] == "http.connections_full"]
        assert 1 <= len(full) <= 3
        assert full[0]["dropped"] == ("reading" if first else "idle")
    finally:
        for connection in flood:
            connection.close()
        server.stop()


def test_a_scraper_that_stops_reading_costs_one_line_and_frees_its_worker(no_traceback):
    text = b"x" * 30_000_000
    server = Server("127.0.0.1", 0, lambda: Deflated.of([text]), lambda: (True, "ready"), None, 0.5)
    server.start()
    try:
        with capture_logs() as logs:
            stalled = socket.socket()
            stalled.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            stalled.connect(("127.0.0.1", server.port))
            stalled.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
            deadline = time.monotonic() + 5
            while not logs and time.monotonic() < deadline:
                time.sleep(0.05)
            stalled.close()
        assert [e["event"] for e in logs] == ["http.answer_failed"]
        assert logs[0]["error"].startswith("TimeoutError")
    finally:
        server.stop()


def test_clients_that_never_close_after_their_answer_hold_no_worker(no_traceback):
    """Each announces a body (refused, so never read) and keeps its connection after the
    answer: the answered connection is drained by the server's loop for `LINGER_S`, not by a
    worker, so three times as many of them as there are workers do not slow a scrape."""
    server = _serving()
    lingering: list[socket.socket] = []
    try:
        for _ in range(3 * server_mod.WORKERS):
            connection = socket.create_connection(("127.0.0.1", server.port), timeout=5)
            connection.sendall(b"POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n")
            lingering.append(connection)
        started = time.monotonic()
        assert _scraped_within(server, 0.5)
        for connection in lingering:  # answered, then closed by the server after the linger
            assert _status(_answer(connection)) == 405
        assert time.monotonic() - started < server_mod.LINGER_S + 2
    finally:
        for connection in lingering:
            connection.close()
        server.stop()
