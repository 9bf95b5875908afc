"""The volumes node agents read, as a cycle asks them of a stand-in Prometheus's answers."""

from __future__ import annotations

from analyzer import settings
from analyzer.collect.coverage import NodeCoverage
from analyzer.live.coverage import Coverage
from analyzer.model.resources import Inventory, Volume
from tests.prometheus_endpoint import vector

URL = "http://prometheus:9090"


def _volume(volume_id: str) -> Volume:
    return Volume(volume_id, "us-east-1", "gp3", 100, "in-use", attached_to="i-1")


def test_without_a_prometheus_no_volume_is_covered() -> None:
    coverage = Coverage.of(settings.load({}))
    assert coverage.prometheus is None
    assert coverage.refresh() == frozenset()
    assert Coverage.of(settings.load({"node_coverage_url": URL})).prometheus is not None


def test_each_refresh_asks_again_and_a_new_set_only_when_the_answer_changes() -> None:
    answers = [vector("vol-a"), vector("vol-a"), vector("vol-a", "vol-b"), b"{not json"]
    asked: list[str] = []

    def get(url: str, _timeout_s: float) -> tuple[int, bytes]:
        asked.append(url)
        return 200, answers[len(asked) - 1]

    coverage = Coverage(NodeCoverage(URL, get=get))
    first = coverage.refresh()
    assert first == {"vol-a"} and coverage.covered is first
    assert coverage.refresh() is first  # the same answer: the same set, nothing planned again
    assert coverage.refresh() == {"vol-a", "vol-b"}
    assert coverage.refresh() == frozenset()  # Prometheus failing: every rate from CloudWatch
    assert len(asked) == 4


def test_the_covered_volumes_of_the_inventories_are_counted() -> None:
    coverage = Coverage(NodeCoverage(URL, get=lambda *_: (200, vector("vol-a", "vol-c"))))
    east = Inventory("us-east-1", volumes=(_volume("vol-a"), _volume("vol-b")))
    west = Inventory("us-west-2", volumes=(_volume("vol-c"),))
    assert coverage.volumes([east, west]) == 0  # not asked yet
    coverage.refresh()
    assert coverage.volumes([east, west]) == 2
