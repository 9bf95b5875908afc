"""The volumes node agents cover: asked of the Prometheus that scrapes them.

A node agent exports `ebs_analyzer_node_volume_read_timestamp_seconds{volume_id}` for each
volume whose page it read last time. A volume one of them read in the last three minutes is
covered: the central daemon leaves its rates to the node. Coverage lives only as long as the
node keeps answering its scrapes, so a node that stops hands its volumes back within three
minutes.

Prometheus is read by its HTTP API's documented contract (`GET /api/v1/query`: a JSON object
with `status` "success", `data.resultType` "vector" and `data.result[].metric.volume_id`).
Anything else (unreachable, a status other than 200, a body off the contract, slower than the
timeout) is a `CoverageError` that says why, and means no coverage: the daemon falls back to
CloudWatch for every volume, never blind because Prometheus is down.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import structlog

log = structlog.get_logger(__name__)

FRESH_S = 180
"""A volume counts as covered while a node read it within this many seconds: three scrapes at
Prometheus's default one-minute interval, so that a healthy node's volumes, whose newest
sample may be a whole interval old, never flap back to CloudWatch."""
QUERY = f"max by (volume_id) (ebs_analyzer_node_volume_read_timestamp_seconds) > time() - {FRESH_S}"
TIMEOUT_S = 3.0
"""The whole answer, connection included: a cycle never waits long on Prometheus."""
MAX_BYTES = 16 * 1024 * 1024


class CoverageError(Exception):
    """Prometheus did not say which volumes nodes cover: why, in one line."""


Get = Callable[[str, float], tuple[int, bytes]]
"""(URL, timeout) → (HTTP status, body)."""


def http_get(url: str, timeout_s: float) -> tuple[int, bytes]:
    """A GET through urllib; any status is returned, a failure to get one raised."""
    request = urllib.request.Request(url, headers={"Accept": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as answer:
            return answer.status, answer.read(MAX_BYTES)
    except urllib.error.HTTPError as exc:
        with exc:
            return exc.code, exc.read(MAX_BYTES)
    except TimeoutError as exc:
        raise CoverageError(f"no answer within {timeout_s:g} s") from exc
    except urllib.error.URLError as exc:
        reason = exc.reason
        if isinstance(reason, TimeoutError):
            raise CoverageError(f"no answer within {timeout_s:g} s") from exc
        raise CoverageError(f"unreachable: {reason}") from exc
    except OSError as exc:
        raise CoverageError(f"unreachable: {exc}") from exc


def query_url(base: str) -> str:
    return f"{base.rstrip('/')}/api/v1/query?" + urllib.parse.urlencode({"query": QUERY})


def covered(base: str, timeout_s: float = TIMEOUT_S, get: Get = http_get) -> frozenset[str]:
    """The ids of the volumes a node read in the last three minutes, as Prometheus at `base`
    says."""
    status, body = get(query_url(base), timeout_s)
    if status != 200:
        raise CoverageError(f"HTTP {status}{_error_of(body)}")
    return parse(body)


def parse(body: bytes) -> frozenset[str]:
    """The volume ids of an instant query's answer; CoverageError for a body off the
    contract."""
    try:
        answer = json.loads(body)
    except (ValueError, UnicodeDecodeError) as exc:
        raise CoverageError("the answer is not JSON") from exc
    if not isinstance(answer, dict):
        raise CoverageError("the answer is not a JSON object")
    if answer.get("status") != "success":
        raise CoverageError(f"status {answer.get('status')!r}{_error_of(body)}")
    data = answer.get("data")
    if not isinstance(data, dict) or data.get("resultType") != "vector":
        raise CoverageError("data.resultType is not 'vector'")
    result = data.get("result")
    if not isinstance(result, list):
        raise CoverageError("data.result is not a list")
    found: set[str] = set()
    for item in result:
        metric = item.get("metric") if isinstance(item, dict) else None
        if not isinstance(metric, dict):
            raise CoverageError("a data.result item has no metric object")
        volume_id = metric.get("volume_id")
        if isinstance(volume_id, str) and volume_id:
            found.add(volume_id)
    return frozenset(found)


def _error_of(body: bytes) -> str:
    """Prometheus's own `error`, where its body holds one."""
    try:
        answer: Any = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return ""
    if isinstance(answer, dict) and isinstance(answer.get("error"), str):
        return f": {answer['error'][:200]}"
    return ""


@dataclass
class NodeCoverage:
    """The covered volumes, asked again at each `refresh`; one warning when Prometheus stops
    answering by its contract, one line when it answers again."""

    url: str
    timeout_s: float = TIMEOUT_S
    get: Get = http_get
    volumes: frozenset[str] = frozenset()
    """The last answer; empty while Prometheus fails. A new object only when it changes, so
    that what is planned from it is planned again only then."""
    failing: str | None = field(default=None)
    """Why the last ask failed; None while Prometheus answers."""

    def refresh(self) -> frozenset[str]:
        try:
            found = covered(self.url, self.timeout_s, self.get)
        except CoverageError as exc:
            if self.failing is None:
                log.warning(
                    "coverage.failed",
                    url=self.url,
                    error=str(exc),
                    fallback="every volume's rates from CloudWatch",
                )
            self.failing = str(exc)
            found = frozenset()
        else:
            if self.failing is not None:
                log.info("coverage.answered", url=self.url, volumes=len(found))
            self.failing = None
        if found != self.volumes:
            self.volumes = found
        return self.volumes
