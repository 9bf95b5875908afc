"""What each path answers, without a socket: the WSGI application on its own, and the
body of a POST to /slack/actions checked before it is handed over."""

from __future__ import annotations

import io

import pytest
from structlog.testing import capture_logs

from analyzer.deliver import endpoints
from analyzer.deliver.deflated import Deflated


def _call(environ: dict, handed: list[bytes]) -> tuple[str, bytes]:
    def actions(headers, body: bytes) -> tuple[int, str]:
        handed.append(body)
        return 200, ""

    app = endpoints.application(
        lambda: Deflated.of([b"up 1\n"]), lambda: (True, "ready"), actions=actions
    )
    said: list[str] = []
    body = b"".join(app(environ, lambda status, headers: said.append(status)))
    return said[0], body


def _post(body: bytes = b"", **environ: str) -> dict:
    return {
        "REQUEST_METHOD": "POST",
        "PATH_INFO": "/slack/actions",
        "wsgi.input": io.BytesIO(body),
        **environ,
    }


@pytest.mark.parametrize(
    ("environ", "status"),
    [
        (_post(b"payload=x", CONTENT_LENGTH="9"), "200 OK"),
        (_post(b"", CONTENT_LENGTH=""), "200 OK"),
        (_post(b"5\r\nhello\r\n0\r\n\r\n", HTTP_TRANSFER_ENCODING="chunked"), "411 "),
        (_post(b"hello", CONTENT_LENGTH="5", HTTP_TRANSFER_ENCODING="chunked"), "411 "),
        (_post(b"", CONTENT_LENGTH="five"), "400 "),
        (_post(b"", CONTENT_LENGTH="-5"), "400 "),
        (_post(b"", CONTENT_LENGTH="\uff15"), "400 "),
        (_post(b"", CONTENT_LENGTH="9" * 5000), "413 "),
        (_post(b"", CONTENT_LENGTH=str(endpoints.MAX_ACTION_BYTES + 1)), "413 "),
        (_post(b"abc", CONTENT_LENGTH="10"), "400 "),
    ],
)
def test_a_slack_body_is_handed_over_only_when_sized_as_slack_sizes_it(environ, status):
    handed: list[bytes] = []
    with capture_logs() as logs:
        said, _ = _call(environ, handed)
    assert said.startswith(status)
    if status == "200 OK":
        assert len(handed) == 1 and logs == []
    else:
        assert handed == [] and [e["event"] for e in logs] == ["slack.unreadable"]


def test_a_body_that_does_not_come_in_time_is_408() -> None:
    class Late(io.RawIOBase):
        def readable(self) -> bool:
            return True

        def readinto(self, buffer) -> int:
            raise TimeoutError("the request did not come in time")

    handed: list[bytes] = []
    environ = _post(CONTENT_LENGTH="5")
    environ["wsgi.input"] = io.BufferedReader(Late())
    with capture_logs() as logs:
        said, body = _call(environ, handed)
    assert said.startswith("408 ") and body == endpoints.LATE.encode()
    assert handed == [] and [e["event"] for e in logs] == ["http.request_timeout"]


@pytest.mark.parametrize(
    ("accept", "gzipped"),
    [
        ("gzip", True),
        ("deflate, gzip;q=0.5", True),
        ("br, GZIP", True),
        ("*", True),
        ("x-gzip", True),
        ("", False),
        ("identity", False),
        ("gzip;q=0", False),
        ("gzip; q=0.0, *", False),
        ("*;q=0", False),
        ("gzip;q=nonsense", False),
    ],
)
def test_gzip_is_taken_as_accept_encoding_weighs_it(accept: str, gzipped: bool) -> None:
    assert endpoints.gzip_accepted(accept) is gzipped
