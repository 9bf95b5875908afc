"""A region as the analyzer reads it: boto3's adapters behind the two boundaries."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import botocore.session

from analyzer.collect import queries
from analyzer.collect.accounts import Account
from analyzer.collect.aws import Clients
from analyzer.collect.cloudwatch import CloudWatch
from analyzer.collect.describe import Ec2Rds
from analyzer.collect.regions import Region, connect, connect_as
from analyzer.collect.window import Window
from analyzer.model.resources import Volume
from analyzer.model.series import Status
from tests.fakes import FakeDescriber, FakeMetricData, Interruptible, access_denied
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


def test_a_monitoring_account_reads_each_account_metrics_with_its_account_id(aws) -> None:
    """Cross-account observability: the metrics are asked of the monitoring account's
    CloudWatch, `AccountId` in every MetricDataQuery (GetMetricData API Reference,
    MetricDataQuery.AccountId); only the Describe calls go through the member's session."""
    monitoring = Answers()
    account = Account("111111111111", "prod", "arn:aws:iam::111111111111:role/ebs-analyzer")
    member = botocore.session.get_session()
    region = connect_as(
        account, "eu-west-1", member, Clients.for_region("eu-west-1", cloudwatch=monitoring)
    )
    assert region.scope == "111111111111/eu-west-1"
    assert region.account_id == "111111111111" and region.account_name == "prod"
    volume = Volume("vol-1", "eu-west-1", "gp3", 100, "in-use", 3_000, 125, "i-1")
    wanted = queries.for_volume(volume, nitro=True)
    window = Window(T0, T0 + minutes(5), 60)
    region.metrics.fetch(wanted, window)
    [call] = monitoring.calls
    asked = call["MetricDataQueries"]
    assert len(asked) == len(wanted)
    assert {q["AccountId"] for q in asked} == {"111111111111"}
    # The call is one botocore accepts: AccountId is a member of MetricDataQuery.
    model = botocore.session.get_session().get_service_model("cloudwatch")
    shape = model.operation_model("GetMetricData").input_shape
    assert "AccountId" in shape.members["MetricDataQueries"].member.members


def test_without_a_monitoring_account_no_query_names_an_account() -> None:
    own = Answers()
    account = Account("111111111111", "prod")
    region = connect_as(account, "eu-west-1", None, cloudwatch=own)
    volume = Volume("vol-1", "eu-west-1", "gp3", 100, "in-use", 3_000, 125, "i-1")
    region.metrics.fetch(queries.for_volume(volume, nitro=True), Window(T0, T0 + minutes(5), 60))
    assert all("AccountId" not in q for q in own.calls[0]["MetricDataQueries"])


def test_a_refused_call_of_one_account_fails_its_metrics_not_the_cycle() -> None:
    """Where there are accounts, a refusal (the role denied or deleted) is that account's
    failed metrics: the cycle goes on for the others."""
    refusing = Interruptible(Answers(), access_denied)
    region = connect_as(Account("111111111111"), "eu-west-1", None, cloudwatch=refusing)
    volume = Volume("vol-1", "eu-west-1", "gp3", 100, "in-use", 3_000, 125, "i-1")
    found, stats = region.metrics.fetch(
        queries.for_volume(volume, nitro=True), Window(T0, T0 + minutes(5), 60)
    )
    assert stats.metrics_failed == len(found) > 0
    assert all(s.status is Status.ERROR for s in found.values())
    assert "AccessDenied" in stats.errors[0] and "111111111111/eu-west-1" in stats.errors[0]
