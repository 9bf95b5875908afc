import re
from datetime import timedelta

import boto3
import pytest
from botocore.exceptions import ClientError
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from analyzer.collect.cloudwatch import CloudWatch
from analyzer.collect.queries import MetricQuery
from analyzer.collect.window import Window
from analyzer.errors import AwsAccessError
from analyzer.model.series import Status
from tests.helpers import T0

WINDOW = Window(T0, T0 + timedelta(minutes=10), 60)


def query(i: int, metric="VolumeReadOps", period=60) -> MetricQuery:
    return MetricQuery(
        f"vol-{i:05d}", "AWS/EBS", metric, (("VolumeId", f"vol-{i:05d}"),), "Sum", period
    )


class FakeCloudWatch:
    """GetMetricData as CloudWatch answers it: pages, status codes, failures."""

    def __init__(self, pages_per_call=1, status=None, fail_with=None):
        self.calls = []
        self.pages_per_call = pages_per_call
        self.status = status or {}
        self.fail_with = fail_with

    def get_metric_data(self, **kwargs):
        self.calls.append(kwargs)
        if self.fail_with:
            raise ClientError({"Error": {"Code": self.fail_with, "Message": "m"}}, "GetMetricData")
        page = int(kwargs.get("NextToken", "0"))
        results = []
        for q in kwargs["MetricDataQueries"]:
            metric = q["MetricStat"]["Metric"]
            rid = metric["Dimensions"][0]["Value"]
            stamp = kwargs["StartTime"] + timedelta(minutes=page)
            results.append(
                {
                    "Id": q["Id"],
                    "Timestamps": [stamp],
                    "Values": [float(int(rid[4:]) * 10 + page)],
                    "StatusCode": self.status.get(
                        rid, "PartialData" if page + 1 < self.pages_per_call else "Complete"
                    ),
                }
            )
        out = {"MetricDataResults": results}
        if page + 1 < self.pages_per_call:
            out["NextToken"] = str(page + 1)
        return out


def test_batches_of_at_most_500_with_valid_ids_mapped_back():
    fake = FakeCloudWatch()
    queries = [query(i) for i in range(1_201)]
    series, stats = CloudWatch(fake, "us-east-1").fetch(queries, WINDOW)
    assert [len(c["MetricDataQueries"]) for c in fake.calls] == [500, 500, 201]
    for call in fake.calls:
        ids = [q["Id"] for q in call["MetricDataQueries"]]
        assert len(set(ids)) == len(ids)
        assert all(re.fullmatch(r"[a-z][a-zA-Z0-9_]*", i) for i in ids)
    assert tuple(series[queries[1_200]].values) == (12_000.0,)
    assert tuple(series[queries[7]].values) == (70.0,)
    assert stats.metrics_requested == 1_201
    assert stats.requests["success"] == 3


def test_pages_are_followed_and_joined():
    fake = FakeCloudWatch(pages_per_call=3)
    q = query(2)
    series, stats = CloudWatch(fake, "us-east-1").fetch([q], WINDOW)
    assert [c.get("NextToken") for c in fake.calls] == [None, "1", "2"]
    assert tuple(series[q].values) == (20.0, 21.0, 22.0)
    assert series[q].status is Status.OK
    assert stats.datapoints == 3


def test_a_query_marked_internal_error_is_an_error_not_no_data():
    fake = FakeCloudWatch(status={"vol-00001": "InternalError"})
    good, bad = query(0), query(1)
    series, _ = CloudWatch(fake, "us-east-1").fetch([good, bad], WINDOW)
    assert series[good].status is Status.OK
    assert series[bad].status is Status.ERROR
    assert "InternalError" in series[bad].error


def test_a_failed_call_fails_its_batch_and_says_why():
    fake = FakeCloudWatch(fail_with="Throttling")
    series, stats = CloudWatch(fake, "us-east-1").fetch([query(0), query(1)], WINDOW)
    assert {s.status for s in series.values()} == {Status.ERROR}
    assert "cloudwatch:GetMetricData in us-east-1: Throttling" in series[query(0)].error
    assert stats.requests["error"] == 1


def test_access_denied_is_fatal():
    with pytest.raises(AwsAccessError):
        CloudWatch(FakeCloudWatch(fail_with="AccessDenied"), "us-east-1").fetch([query(0)], WINDOW)


def test_against_moto_results_come_back_oldest_first_in_utc(aws):
    client = boto3.client("cloudwatch", region_name="us-east-1")
    client.put_metric_data(
        Namespace="AWS/EBS",
        MetricData=[
            {
                "MetricName": "VolumeReadOps",
                "Dimensions": [{"Name": "VolumeId", "Value": "vol-00003"}],
                "Timestamp": T0 + timedelta(minutes=m),
                "Value": 60.0 * m,
            }
            for m in range(10)
        ],
    )
    q, empty = query(3), query(4)
    series, _ = CloudWatch(client, "us-east-1").fetch([q, empty], WINDOW)
    assert tuple(series[q].values) == tuple(60.0 * m for m in range(10))
    assert series[q].timestamps[0] == T0
    assert series[q].timestamps[0].tzinfo is not None
    assert series[empty].status is Status.NO_DATA


def test_requests_are_valid_for_the_service_model():
    """The analyzer's CloudWatch client skips botocore's request validation: the one place
    that builds requests is checked here instead."""
    from botocore.validate import ParamValidator

    from analyzer.collect.cloudwatch import arguments

    client = boto3.client("cloudwatch", region_name="us-east-1")
    shape = client.meta.service_model.operation_model("GetMetricData").input_shape
    ids = {f"m{i}": query(i, period=300 if i % 2 else 60) for i in range(500)}
    report = ParamValidator().validate(arguments(ids, WINDOW), shape)
    assert not report.has_errors(), report.generate_report()


def test_the_analyzer_client_skips_validation_only_for_cloudwatch():
    from analyzer.collect.aws import client_config

    assert client_config().parameter_validation is True
    assert client_config(validate=False).parameter_validation is False


@given(
    st.lists(
        st.lists(
            st.tuples(st.integers(min_value=0, max_value=30), st.floats(allow_nan=False)),
            max_size=12,
        ),
        min_size=1,
        max_size=3,
    ),
    st.booleans(),
)
def test_a_series_is_its_pages_joined_with_the_later_value_winning(pages, utc):
    from datetime import UTC, timezone

    from analyzer.collect.cloudwatch import _series

    zone = UTC if utc else timezone(timedelta(hours=2))
    parts = [
        ([(T0 + timedelta(minutes=m)).astimezone(zone) for m, _ in page], [v for _, v in page])
        for page in pages
    ]
    expected: dict = {}
    for page in pages:
        for m, v in page:
            expected[T0 + timedelta(minutes=m)] = v
    found = _series(parts, 60)
    assert found.points() == sorted(expected.items())
    assert all(t.tzinfo is UTC for t in found.timestamps)
    assert found.status is (Status.OK if expected else Status.NO_DATA)


def test_one_page_in_order_is_taken_as_it_came_not_copied():
    from array import array

    from analyzer.collect.cloudwatch import _series

    stamps = [T0 + timedelta(minutes=m) for m in range(20_160)]
    values = array("d", range(20_160))
    found = _series([(stamps, values)], 60)
    assert found.values is values and found.timestamps == tuple(stamps)
    twice = _series([(stamps[:3] + stamps[2:4], array("d", [1, 2, 3, 4, 5]))], 60)
    assert twice.timestamps == tuple(stamps[:4]) and list(twice.values) == [1, 2, 4, 5]


class Answering:
    """A client that answers every call with the same page (or raises), for malformed and
    incomplete answers."""

    def __init__(self, page=None, raises=None):
        self.page, self.raises, self.calls = page, raises, 0

    def get_metric_data(self, **kwargs):
        self.calls += 1
        if self.raises:
            raise self.raises
        return self.page(kwargs) if callable(self.page) else self.page


def _fails(series, stats, why):
    assert {s.status for s in series.values()} == {Status.ERROR}
    assert all(why in s.error for s in series.values())
    assert stats.metrics_failed == len(series)


def test_a_query_left_out_of_the_answer_is_an_error_not_no_data():
    def without_the_second(kwargs):
        first = kwargs["MetricDataQueries"][0]["Id"]
        return {"MetricDataResults": [{"Id": first, "Timestamps": [T0], "Values": [1.0]}]}

    good, left_out = query(0), query(1)
    series, stats = CloudWatch(Answering(without_the_second), "us-east-1").fetch(
        [good, left_out], WINDOW
    )
    assert series[good].status is Status.OK
    assert series[left_out].status is Status.ERROR
    assert "answered without VolumeReadOps" in series[left_out].error
    assert stats.outcome == "partial"


def test_partial_data_without_a_next_token_is_an_error():
    def partial(kwargs):
        rid = kwargs["MetricDataQueries"][0]["Id"]
        return {"MetricDataResults": [{"Id": rid, "StatusCode": "PartialData"}]}

    series, stats = CloudWatch(Answering(partial), "us-east-1").fetch([query(0)], WINDOW)
    _fails(series, stats, "PartialData for VolumeReadOps on its last page")


def test_an_answer_that_never_ends_is_cut_off():
    client = Answering({"MetricDataResults": [], "NextToken": "again"})
    series, stats = CloudWatch(client, "us-east-1").fetch([query(0)], WINDOW)
    _fails(series, stats, "more than 100 pages")
    assert client.calls == 100


@pytest.mark.parametrize(
    ("page", "raises"),
    [
        ({"MetricDataResults": "garbage"}, None),
        ({"MetricDataResults": [{"Timestamps": [], "Values": []}]}, None),
        ({"MetricDataResults": [{"Id": "m0", "Timestamps": [T0], "Values": []}]}, None),
        (["not", "a", "dict"], None),
        (None, UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid start byte")),
    ],
)
def test_a_malformed_answer_fails_its_call_in_one_line(page, raises):
    series, stats = CloudWatch(Answering(page, raises), "us-east-1").fetch([query(0)], WINDOW)
    _fails(series, stats, "cloudwatch:GetMetricData in us-east-1: malformed answer")
    assert "\n" not in series[query(0)].error


def on_the_wire(answer):
    """The analyzer's own CloudWatch client, its HTTP answered with `answer()` (JSON-encoded
    unless bytes) so that botocore's parser reads it as it reads CloudWatch's."""
    import json

    from botocore.awsrequest import AWSResponse

    from analyzer.collect.aws import Clients

    class Body:
        def __init__(self, data: bytes) -> None:
            self.data = data

        def stream(self, **_kwargs):
            yield self.data

    def send(request, **_kwargs):
        body = answer()
        if not isinstance(body, bytes):
            body = json.dumps(body, default=lambda t: t.timestamp()).encode()
        headers = {"Content-Type": "application/x-amz-json-1.0"}
        return AWSResponse(request.url, 200, headers, Body(body))

    client = Clients.for_region("us-east-1").cloudwatch
    client.meta.events.register("before-send", send)
    return CloudWatch(client, "us-east-1")


def test_a_well_formed_answer_on_the_wire_is_read():
    answer = {
        "MetricDataResults": [
            {"Id": "m0", "Timestamps": [T0], "Values": [3], "StatusCode": "Complete"}
        ]
    }
    series, stats = on_the_wire(lambda: answer).fetch([query(0)], WINDOW)
    assert tuple(series[query(0)].values) == (3.0,)
    assert stats.outcome == "success"


def result(**fields):
    return {"MetricDataResults": [{"Id": "m0", "StatusCode": "Complete", **fields}]}


@pytest.mark.parametrize(
    ("answer", "why"),
    [
        ({"MetricDataResults": "x"}, "AttributeError"),  # botocore's parser trips on it
        ({"MetricDataResults": ["x", "y"]}, "AttributeError"),
        ({"MetricDataResults": {"Id": "m0"}}, "AttributeError"),
        (result(Timestamps=["yesterday"], Values=[1.0]), "Invalid timestamp"),
        (result(Timestamps=[True], Values=[1.0]), "expected a timestamp, got True"),
        (result(Timestamps=[1e300], Values=[1.0]), "out of range"),
        (result(Timestamps=[T0], Values=["1.0"]), "MetricDataResults[].Values: expected finite"),
        (result(Timestamps=[T0], Values=[{"v": 1}]), "got dict"),
        (result(Timestamps=[T0], Values=[True]), "got bool True"),
        (result(Timestamps=[T0], Values=[float("nan")]), "got float nan"),
        (result(Id=0, Timestamps=[T0], Values=[1.0]), "MetricDataResults[].Id: expected a str"),
        (result(StatusCode=3, Timestamps=[T0], Values=[1.0]), "StatusCode: expected a string"),
        ({"MetricDataResults": [], "NextToken": 7}, "NextToken: expected a string, got int 7"),
        ("just a string", "AttributeError"),
        ([], "AttributeError"),
        (b"\xff not json", "UnicodeDecodeError"),
        (b"[" * 100_000, "RecursionError"),
    ],
)
def test_an_answer_off_the_contract_fails_its_call_in_one_line(answer, why):
    series, stats = on_the_wire(lambda: answer).fetch([query(0), query(1)], WINDOW)
    _fails(series, stats, "cloudwatch:GetMetricData in us-east-1: malformed answer: ")
    assert all(why in s.error for s in series.values())
    assert all("\n" not in s.error and len(s.error) <= 300 for s in series.values())
    assert stats.requests["error"] == 1 and stats.errors == [series[query(0)].error]


class Wire:
    """One client for many answers: a client is too slow to make for each example."""

    def __init__(self) -> None:
        self.answer: object = None
        self.cloudwatch = on_the_wire(lambda: self.answer)


@pytest.fixture
def wire():
    return Wire()


JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=12,
)
RESULT = st.fixed_dictionaries(
    {},
    optional={
        "Id": st.sampled_from(["m0", "m1", "mx"]) | JSONISH,
        "Timestamps": st.lists(st.integers(0, 2**31) | JSONISH, max_size=3) | JSONISH,
        "Values": st.lists(st.floats() | JSONISH, max_size=3) | JSONISH,
        "StatusCode": st.sampled_from(["Complete", "PartialData"]) | JSONISH,
        "Label": JSONISH,
    },
)


@given(
    st.fixed_dictionaries(
        {},
        optional={
            "MetricDataResults": st.lists(RESULT | JSONISH, max_size=3) | JSONISH,
            "NextToken": st.none() | st.integers() | st.lists(st.integers(), max_size=2),
        },
    )
    | JSONISH
)
@settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
def test_no_answer_on_the_wire_is_a_traceback(wire, answer):
    """Whatever the body, every query ends as a series (data, no data, or its call's error
    in one line), or the fetch raises the analyzer's own error: nothing else escapes."""
    from datetime import UTC

    from analyzer.errors import AnalyzerError

    wire.answer = answer
    try:
        series, _stats = wire.cloudwatch.fetch([query(0), query(1)], WINDOW)
    except AnalyzerError:
        return
    assert set(series) == {query(0), query(1)}
    for found in series.values():
        assert found.status is not Status.ERROR or "\n" not in found.error
        assert all(t.tzinfo is UTC for t in found.timestamps)
