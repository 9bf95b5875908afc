"""The HTTP endpoints: many scrapers at once, idle connections closed, IPv6."""

from __future__ import annotations

import socket
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import pytest

from analyzer import settings
from analyzer.deliver import server as server_mod
from analyzer.deliver.server import Server


def serving(host: str) -> Server:
    server = Server(host, 0, lambda: b"ebs_analyzer_up 1\n", lambda: (True, "ready"))
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


def test_an_idle_connection_is_closed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(server_mod._QuietHandler, "timeout", 0.2)
    server = serving("127.0.0.1")
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
