"""A region as the analyzer reads it: boto3's adapters behind the two boundaries."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from analyzer.collect import queries
from analyzer.collect.aws import Clients
from analyzer.collect.cloudwatch import CloudWatch
from analyzer.collect.describe import Ec2Rds
from analyzer.collect.regions import Region, connect
from analyzer.collect.window import Window
from analyzer.model.resources import Volume
from analyzer.model.series import Status
from tests.fakes import FakeDescriber, FakeMetricData
from tests.helpers import T0, minutes


@dataclass
class Answers:
    """A CloudWatch client stand-in that answers every GetMetricData with nothing."""

    calls: list[dict[str, Any]] = field(default_factory=list)

    def get_metric_data(self, **kwargs: Any) -> dict[str, Any]:
        self.calls.append(kwargs)
        return {"MetricDataResults": [], "Messages": []}


def test_connect_reads_the_region_through_its_clients() -> None:
    answers = Answers()
    region = connect("eu-west-1", Clients.for_region("eu-west-1", cloudwatch=answers))
    assert region.name == "eu-west-1"
    assert isinstance(region.describe, Ec2Rds) and isinstance(region.metrics, CloudWatch)
    assert region.describe.region == region.metrics.region == "eu-west-1"
    volume = Volume("vol-1", "eu-west-1", "gp3", 100, "in-use", 3_000, 125, "i-1")
    query = queries.for_volume(volume, nitro=True)[0]
    window = Window(T0, T0 + minutes(5), 60)
    found, _ = region.metrics.fetch([query], window)
    assert len(answers.calls) == 1
    assert found[query].status is Status.ERROR  # answered without it: failed, not "no data"


def test_connect_builds_the_region_s_own_clients() -> None:
    region = connect("ap-southeast-2")
    assert region.describe.region == "ap-southeast-2"
    assert region.metrics.region == "ap-southeast-2"


def test_a_region_takes_any_describer_and_metric_data() -> None:
    region = Region("us-east-1", FakeDescriber(), FakeMetricData(lambda _q, _t: None))
    assert region.describe.volumes() == []
