"""The volumes node agents cover, asked of a stand-in Prometheus; every fault means none."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from structlog.testing import capture_logs

from analyzer.collect import coverage
from analyzer.collect.coverage import CoverageError, NodeCoverage
from tests.prometheus_endpoint import PrometheusEndpoint


@pytest.fixture
def prometheus() -> Iterator[PrometheusEndpoint]:
    server = PrometheusEndpoint("vol-a", "vol-b").start()
    yield server
    server.stop()


def test_the_volumes_read_in_the_last_minute_are_covered(prometheus: PrometheusEndpoint) -> None:
    assert coverage.covered(prometheus.root) == {"vol-a", "vol-b"}
    assert prometheus.queries == [coverage.QUERY]
    assert "> time() - 180" in coverage.QUERY


def _unreachable() -> str:
    server = PrometheusEndpoint().start()
    server.stop()
    return server.root


def _fault(prometheus: PrometheusEndpoint, kind: str) -> str:
    if kind == "down":
        return _unreachable()
    if kind == "500":
        prometheus.status = 500
        prometheus.body = b'{"status":"error","errorType":"internal","error":"boom"}'
    elif kind == "garbage":
        prometheus.body = b"<html>not prometheus</html>"
    elif kind == "slow":
        prometheus.delay_s = 1.0
    return prometheus.root


@pytest.mark.parametrize(
    ("kind", "said"),
    [
        ("down", "unreachable"),
        ("500", "HTTP 500: boom"),
        ("garbage", "not JSON"),
        ("slow", "no answer within 0.3 s"),
    ],
)
def test_a_fault_is_no_coverage_and_one_warning(
    prometheus: PrometheusEndpoint, kind: str, said: str
) -> None:
    watch = NodeCoverage(prometheus.root, timeout_s=0.3)
    assert watch.refresh() == {"vol-a", "vol-b"}
    watch.url = _fault(prometheus, kind)
    with capture_logs() as logs:
        for _ in range(3):
            assert watch.refresh() == frozenset()
    warned = [e for e in logs if e["event"] == "coverage.failed"]
    assert len(warned) == 1
    assert warned[0]["url"] == watch.url and said in warned[0]["error"]
    prometheus.answers("vol-a")
    watch.url = prometheus.root
    with capture_logs() as logs:
        assert watch.refresh() == {"vol-a"}
    assert [e["event"] for e in logs] == ["coverage.answered"]


@pytest.mark.parametrize(
    ("body", "said"),
    [
        ([], "not a JSON object"),
        ({"status": "error", "error": "bad query"}, "status 'error': bad query"),
        ({"status": "success", "data": {"resultType": "matrix", "result": []}}, "'vector'"),
        ({"status": "success", "data": {"resultType": "vector", "result": {}}}, "not a list"),
        ({"status": "success", "data": {"resultType": "vector", "result": [1]}}, "no metric"),
    ],
)
def test_a_body_off_the_contract_is_refused(body: object, said: str) -> None:
    with pytest.raises(CoverageError, match=said):
        coverage.parse(json.dumps(body).encode())


def test_a_series_without_a_volume_id_covers_nothing() -> None:
    body = {"status": "success", "data": {"resultType": "vector", "result": [{"metric": {}}]}}
    assert coverage.parse(json.dumps(body).encode()) == frozenset()


def test_the_set_is_the_same_object_while_the_answer_is(prometheus: PrometheusEndpoint) -> None:
    watch = NodeCoverage(prometheus.root)
    first = watch.refresh()
    assert watch.refresh() is first
