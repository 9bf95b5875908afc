"""`ebs-analyzer apply FIX_ID` against a moto account: each guard refuses before anything is
asked of AWS, and the account is read back unchanged; an allowed fix is one ModifyVolume."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError, ReadTimeoutError
from botocore.stub import Stubber
from structlog.testing import capture_logs

from analyzer.act.apply import Applier, Outcome
from analyzer.act.guards import Policy
from analyzer.act.plan import Plan
from analyzer.analyze import prices
from analyzer.analyze.catalog import Catalog
from analyzer.cli import main
from analyzer.collect.aws import Clients
from analyzer.collect.changes import Ec2RdsChanges
from analyzer.model.resources import Modification, Volume
from tests.helpers import moto_database

REGION = "us-east-1"
ALLOWED = [{"Key": "ebs-analyzer/apply", "Value": "allowed"}]
GP3 = "type=gp3,iops=3000,throughput=125"


def _volume(size: int = 50, kind: str = "gp2", tags: list[dict[str, str]] | None = None) -> str:
    ec2 = boto3.client("ec2", REGION)
    spec = [{"ResourceType": "volume", "Tags": tags}] if tags else []
    made = ec2.create_volume(
        Size=size, VolumeType=kind, AvailabilityZone=f"{REGION}a", TagSpecifications=spec
    )
    return str(made["VolumeId"])


def _read(volume_id: str) -> dict[str, Any]:
    found = boto3.client("ec2", REGION).describe_volumes(VolumeIds=[volume_id])["Volumes"][0]
    return {k: found.get(k) for k in ("VolumeType", "Size", "Iops", "Throughput")}


def _modifications(volume_id: str) -> int:
    ec2 = boto3.client("ec2", REGION)
    answer = ec2.describe_volumes_modifications(
        Filters=[{"Name": "volume-id", "Values": [volume_id]}]
    )
    return len(answer["VolumesModifications"])


def _apply(*words: str) -> list[str]:
    return ["apply", *words, "--region", REGION, "--no-past", "--wait", "0"]


def test_a_draining_gp2_in_scope_is_moved_to_its_fix_in_one_modify_volume(aws, capsys) -> None:
    vol = _volume(tags=ALLOWED)
    code = main(_apply(f"{vol}:{GP3}", "--yes"))
    out = capsys.readouterr().out
    assert code == 0, out
    assert f"apply {vol}:{GP3}" in out
    assert "today:  gp2 50 GiB" in out and "target: gp3 50 GiB, 3,000 IOPS, 125 MiB/s" in out
    assert "cost:   −$1.00/month" in out  # gp3 $0.08 against gp2 $0.10 a GiB-month
    assert "applied: modification completed; now gp3 50 GiB, 3,000 IOPS, 125 MiB/s" in out
    assert _read(vol) == {"VolumeType": "gp3", "Size": 50, "Iops": 3000, "Throughput": 125}
    assert _modifications(vol) == 1
    # Applied again: already so, nothing called.
    assert main(_apply(f"{vol}:{GP3}", "--yes")) == 0
    assert "already so: nothing to do" in capsys.readouterr().out
    assert _modifications(vol) == 1


def test_without_yes_off_a_terminal_nothing_changes_and_it_says_how(aws, capsys) -> None:
    vol = _volume(tags=ALLOWED)
    assert main(_apply(f"{vol}:{GP3}")) == 3
    err = capsys.readouterr().err
    assert "nothing changed: pass --yes" in err
    assert _read(vol)["VolumeType"] == "gp2" and _modifications(vol) == 0


@pytest.mark.parametrize(
    ("tags", "size", "fix", "extra", "says"),
    [
        (
            None,
            50,
            GP3,
            (),
            "outside the apply scope: it must carry the tag "
            "ebs-analyzer/apply=allowed (aws ec2 create-tags",
        ),
        ([{"Key": "ebs-analyzer/apply", "Value": "no"}], 50, GP3, (), "outside the apply scope"),
        (ALLOWED, 100, "type=gp2,size=60", (), "storage grows, never shrinks"),
        # gp2 50 → 1,000 GiB: +$95.00 a month, above the $50 default ceiling.
        (
            ALLOWED,
            50,
            "type=gp2,size=1000",
            (),
            "adds +$95.00/month, above "
            "apply_max_monthly_increase ($50.00/month): pass --allow-cost-increase",
        ),
        (
            [
                *ALLOWED,
                {"Key": "kubernetes.io/created-for/pvc/namespace", "Value": "db"},
                {"Key": "kubernetes.io/created-for/pvc/name", "Value": "data-0"},
                {"Key": "ebs.csi.aws.com/cluster", "Value": "true"},
            ],
            50,
            GP3,
            (),
            "belongs to PVC db/data-0: it is changed through the claim",
        ),
    ],
)
def test_each_guard_refuses_before_aws_is_asked_and_the_volume_is_unchanged(
    aws, capsys, tags, size, fix, extra, says
) -> None:
    vol = _volume(size=size, tags=tags)
    before = _read(vol)
    assert main(_apply(f"{vol}:{fix}", "--yes", *extra)) == 3
    err = capsys.readouterr().err
    assert says in err, err
    assert len(err.strip().splitlines()) == 1
    assert _read(vol) == before and _modifications(vol) == 0


def test_the_cost_ceiling_yields_to_its_flag(aws, capsys) -> None:
    vol = _volume(tags=ALLOWED)
    assert main(_apply(f"{vol}:type=gp2,size=1000", "--yes", "--allow-cost-increase")) == 0
    assert _read(vol)["Size"] == 1000


def test_a_scope_of_tag_filters_widens_the_tag(aws, capsys, tmp_path) -> None:
    vol = _volume(tags=[{"Key": "team", "Value": "db"}])
    config = tmp_path / "config.yaml"
    config.write_text("apply_scope: [team=db]\n")
    assert main([*_apply(f"{vol}:{GP3}", "--yes"), "--config", str(config)]) == 0
    assert _read(vol)["VolumeType"] == "gp3"


@pytest.mark.parametrize(
    ("fix", "code", "says"),
    [
        ("vol-0abc", 2, "apply vol-0abc: expected ID:KEY=VALUE"),
        ("vol-0123456789abcdef0:type=gp3", 2, "no volume vol-0123456789abcdef0 in us-east-1"),
        ("{vol}:type=gp4", 2, "type gp4 is not an EBS volume type"),
        ("{vol}:type=gp3,iops=99000", 2, "gp3 at 50 GiB provisions at most 25,000 IOPS"),
        ("i-0abc:type=m5.xlarge", 3, "an instance type change needs a stop and start"),
        ("{vol}:stripes=4,type=gp3", 2, "stripes= cannot be applied"),
        ("{vol}:stripes=4", 2, "stripes= cannot be applied"),
    ],
)
def test_bad_input_is_one_line_and_changes_nothing(aws, capsys, fix, code, says) -> None:
    vol = _volume(tags=ALLOWED)
    assert main(_apply(fix.format(vol=vol), "--yes")) == code
    err = capsys.readouterr().err
    assert says in err and len(err.strip().splitlines()) == 1, err
    assert _modifications(vol) == 0


def test_a_dry_run_asks_aws_and_changes_nothing(aws, capsys) -> None:
    vol = _volume(tags=ALLOWED)
    assert main(_apply(f"{vol}:{GP3}", "--dry-run")) == 0
    assert "dry run: AWS says the change would succeed (DryRun)" in capsys.readouterr().out
    assert _read(vol)["VolumeType"] == "gp2" and _modifications(vol) == 0


def _stubbed(vol: Volume, error: str) -> Applier:
    """An Applier whose ModifyVolume answers `error`, as EC2 would."""
    clients = Clients.for_region(REGION)
    stub = Stubber(clients.ec2)
    stub.add_response(
        "describe_volumes",
        {
            "Volumes": [
                {
                    "VolumeId": vol.volume_id,
                    "Size": 50,
                    "VolumeType": "gp2",
                    "State": "in-use",
                    "Tags": ALLOWED,
                }
            ]
        },
    )
    stub.add_response("describe_volumes_modifications", {"VolumesModifications": []})
    stub.activate()
    # The modifying call goes through a client of its own, which never retries.
    once = Stubber(clients.once("ec2"))
    once.add_client_error("modify_volume", service_error_code=error, service_message="no")
    once.activate()
    return Applier(
        [(REGION, Ec2RdsChanges(clients))],
        Catalog(prices.load()),
        Policy("ebs-analyzer/apply=allowed"),
        lambda: datetime.now(UTC),
    )


@pytest.mark.parametrize("error", ["UnauthorizedOperation", "IncorrectModificationState"])
def test_an_aws_error_is_exit_1_in_one_line(error) -> None:
    applier = _stubbed(Volume("vol-1", REGION, "gp2", 50, "in-use"), error)
    plan = applier.plan(f"vol-1:{GP3}")
    assert not isinstance(plan, type(None))
    assert applier.check(plan, False) is None  # type: ignore[arg-type]
    result = applier.apply(plan, dry_run=error == "UnauthorizedOperation", wait_s=0)  # type: ignore[arg-type]
    assert result.outcome is Outcome.FAILED and result.exit_code == 1
    assert f"ec2:ModifyVolume in {REGION}: {error}" in result.reason


def test_the_fifth_modification_in_a_day_is_refused_through_the_cli(aws, capsys) -> None:
    vol = _volume(tags=ALLOWED)
    ec2 = boto3.client("ec2", REGION)
    for size in (51, 52, 53, 54):
        ec2.modify_volume(VolumeId=vol, Size=size)
    assert main(_apply(f"{vol}:{GP3}", "--yes")) == 3
    err = capsys.readouterr().err
    assert "modified 4 times in the last 24 h (AWS allows 4): the next becomes possible" in err
    assert _read(vol)["VolumeType"] == "gp2" and _modifications(vol) == 4


def test_the_attempt_is_one_structured_log_line(aws, capsys) -> None:
    vol = _volume()
    main([*_apply(f"{vol}:{GP3}", "--yes"), "--log-level", "info"])
    [text] = [e for e in capsys.readouterr().err.splitlines() if "apply.attempt" in e]
    line = json.loads(text)  # JSON lines off a terminal
    assert (line["outcome"], line["fix_id"], line["via"]) == ("refused", f"{vol}:{GP3}", "cli")
    assert line["who"] and "outside the apply scope" in line["reason"]
    assert line["before"] == {"volume_type": "gp2", "size_gib": 50}
    assert line["target"] == {
        "volume_type": "gp3",
        "size_gib": 50,
        "iops": 3000,
        "throughput_mibps": 125,
    }


def test_the_audit_line_carries_who_which_fix_before_and_after() -> None:
    from structlog.testing import capture_logs

    from analyzer.act.apply import Result, audit

    with capture_logs() as logs:
        audit(Result(Outcome.REFUSED, "vol-1:type=gp3", "outside the apply scope"), "U123", "slack")
    [line] = logs
    assert line["event"] == "apply.attempt" and line["log_level"] == "info"
    assert (line["who"], line["via"], line["fix_id"], line["outcome"]) == (
        "U123",
        "slack",
        "vol-1:type=gp3",
        "refused",
    )


def _storage() -> tuple[str, int]:
    found = boto3.client("rds", REGION).describe_db_instances(DBInstanceIdentifier="orders")
    db = found["DBInstances"][0]
    return db["StorageType"], db["AllocatedStorage"]


def test_rds_storage_is_modified_at_once_and_read_back_where_its_price_may_be_unknown(
    aws, capsys
) -> None:
    moto_database(ALLOWED)
    # The price file holds no RDS storage: unknown, which the cost ceiling refuses unasked.
    assert main(_apply("orders:type=gp3", "--yes")) == 3
    assert "the price of orders:type=gp3 is unknown here" in capsys.readouterr().err
    assert _storage() == ("gp2", 200)
    assert main(_apply("orders:type=gp3,size=400", "--yes", "--allow-cost-increase")) == 0
    out = capsys.readouterr().out
    assert "applied: RDS available; now gp3 400 GiB" in out
    assert _storage() == ("gp3", 400)
    # Storage never shrinks: RDS does not sell it, said as bad input.
    assert main(_apply("orders:size=300", "--yes")) == 2
    assert "RDS storage grows, never shrinks" in capsys.readouterr().err


def test_a_modification_under_way_to_the_target_is_already_so() -> None:
    from analyzer.act.plan import plan_of
    from analyzer.analyze.sold import Asked

    # AWS gives a gp2 target's IOPS (its baseline) beside the size the fix sets.
    mod = Modification(
        "optimizing",
        datetime.now(UTC),
        40,
        "gp2 200 GiB 600 IOPS",
        (("volume_type", "gp2"), ("size_gib", 200), ("iops", 600)),
    )
    volume = Volume("vol-1", REGION, "gp2", 50, "in-use", iops=150, modifications=(mod,))
    plan = plan_of(Asked.parse("vol-1:size=200", "apply"), REGION, volume, Catalog(prices.load()))
    applier = Applier([], Catalog(prices.load()), Policy("a=b"), lambda: datetime.now(UTC))
    result = applier.check(plan, allow_cost=False)
    assert result is not None and result.outcome is Outcome.ALREADY
    assert "is being modified to it already (optimizing" in result.reason


class _Place:
    """A region that holds an RDS instance `orders`, or none, or cannot be read."""

    def __init__(self, where: str, holds: bool, fails: bool = False) -> None:
        self.where, self._holds, self._fails = where, holds, fails

    def volume(self, volume_id: str) -> Volume | None:
        return None

    def db_instance(self, db_instance_id: str):
        from analyzer.errors import AwsAccessError
        from analyzer.model.resources import DbInstance

        if self._fails:
            raise AwsAccessError(
                f"rds:DescribeDBInstances in {self.where}: AccessDenied", "AccessDenied"
            )
        if not self._holds:
            return None
        return DbInstance(
            "orders",
            "us-east-1",
            "mysql",
            "db.m5.large",
            "gp2",
            200,
            "available",
            tags={"ebs-analyzer/apply": "allowed"},
        )

    def modify_volume(self, *args):  # pragma: no cover - never reached: refused before
        raise AssertionError("called")

    def modify_db_storage(self, *args):  # pragma: no cover - never reached: refused before
        raise AssertionError("called")


@pytest.mark.parametrize(
    ("places", "outcome", "says"),
    [
        # RDS ids are unique within one account and region only: never a guess between two.
        (
            [("111/us-east-1", True), ("222/eu-west-1", True)],
            Outcome.INVALID,
            "orders is in 111/us-east-1, 222/eu-west-1: name one",
        ),
        # A place that cannot be read does not hide the one that holds it...
        ([("111/us-east-1", False, True), ("222/eu-west-1", True)], None, ""),
        # ...and is the reason where none does.
        (
            [("111/us-east-1", False, True), ("222/eu-west-1", False)],
            Outcome.FAILED,
            "AccessDenied",
        ),
    ],
)
def test_a_resource_is_found_in_exactly_one_place(places, outcome, says) -> None:
    applier = Applier(
        [(p[0], _Place(*p)) for p in places],  # type: ignore[misc]
        Catalog(prices.load()),
        Policy("ebs-analyzer/apply=allowed"),
        lambda: datetime.now(UTC),
    )
    found = applier.plan("orders:type=gp3")
    if outcome is None:
        assert found.scope == "222/eu-west-1"  # type: ignore[union-attr]
    else:
        assert found.outcome is outcome and says in found.reason  # type: ignore[union-attr]


def _timing_out(clients: Clients, event: str, error: Exception, sent: list[str]) -> None:
    """The modifying client's ModifyVolume meets `error` at `event`: before it is sent (AWS
    never saw it), or after AWS answered (the answer lost on its way back)."""

    def fail(**kwargs: Any) -> None:
        sent.append(event)
        raise error

    clients.once("ec2").meta.events.register(f"{event}.ec2.ModifyVolume", fail)


def _applier(clients: Clients, accepted: list[Any] | None = None) -> Applier:
    applier = Applier(
        [(REGION, Ec2RdsChanges(clients))],
        Catalog(prices.load()),
        Policy("ebs-analyzer/apply=allowed"),
        lambda: datetime.now(UTC),
    )
    if accepted is not None:
        applier.accepted = accepted.append
    return applier


READ_TIMEOUT = ReadTimeoutError(endpoint_url="https://ec2.us-east-1.amazonaws.com/")
SERVER_ERROR = ClientError(
    {"Error": {"Code": "InternalError", "Message": "An internal error"}}, "ModifyVolume"
)


def test_a_modifying_call_is_sent_once_whatever_the_users_retry_settings(aws, monkeypatch) -> None:
    """botocore's standard mode would send ModifyVolume again after a read timeout; on AWS the
    resend meets IncorrectModificationState while the first is under way."""
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "5")
    vol = _volume(tags=ALLOWED)
    clients = Clients.for_region(REGION)
    sent: list[str] = []
    _timing_out(clients, "before-send", READ_TIMEOUT, sent)
    applier = _applier(clients)
    plan = applier.plan(f"{vol}:{GP3}")
    assert isinstance(plan, Plan)
    result = applier.yes(plan, dry_run=False, wait_s=0)
    assert sent == ["before-send"]  # once, never again
    assert result.outcome is Outcome.FAILED and "(read back: not modified)" in result.reason
    assert _read(vol)["VolumeType"] == "gp2" and _modifications(vol) == 0


@pytest.mark.parametrize("error", [READ_TIMEOUT, SERVER_ERROR], ids=["timeout", "5xx"])
def test_a_change_whose_answer_was_lost_is_read_back_and_recorded_as_made(aws, error) -> None:
    vol = _volume(tags=ALLOWED)
    clients = Clients.for_region(REGION)
    sent: list[str] = []
    _timing_out(clients, "after-call", error, sent)
    accepted: list[Any] = []
    applier = _applier(clients, accepted)
    plan = applier.plan(f"{vol}:{GP3}")
    assert isinstance(plan, Plan)
    result = applier.yes(plan, dry_run=False, wait_s=0)
    assert sent == ["after-call"] and _modifications(vol) == 1
    assert result.outcome is Outcome.APPLIED and result.exit_code == 0, result.reason
    assert "AWS's answer was lost" in result.reason and result.started is not None
    # The record was written the moment the change was found accepted, before the read-back.
    [first] = accepted
    assert first.outcome is Outcome.APPLIED and not first.settled
    assert first.started == result.started


def test_a_lost_answer_on_a_resource_that_cannot_be_read_back_is_unknown(aws) -> None:
    vol = _volume(tags=ALLOWED)
    clients = Clients.for_region(REGION)
    sent: list[str] = []
    _timing_out(clients, "after-call", READ_TIMEOUT, sent)
    applier = _applier(clients)
    plan = applier.plan(f"{vol}:{GP3}")
    assert isinstance(plan, Plan)

    def unreadable(**kwargs: Any) -> None:
        raise READ_TIMEOUT

    clients.ec2.meta.events.register("before-send.ec2.DescribeVolumes", unreadable)
    result = applier.yes(plan, dry_run=False, wait_s=0)
    assert result.outcome is Outcome.UNKNOWN and result.exit_code == 1
    assert "it may have been modified" in result.reason


def test_an_accepted_change_is_said_before_its_read_back(aws) -> None:
    vol = _volume(tags=ALLOWED)
    accepted: list[Any] = []
    applier = _applier(Clients.for_region(REGION), accepted)
    plan = applier.plan(f"{vol}:{GP3}")
    assert isinstance(plan, Plan)
    with capture_logs() as logs:
        result = applier.yes(plan, dry_run=False, wait_s=0)
    assert [e["event"] for e in logs if e["event"].startswith("apply.")] == ["apply.accepted"]
    [first] = accepted
    assert not first.settled and result.settled and result.started == first.started


def test_a_lost_answer_is_recognised_on_awss_records_whatever_this_clock_says(aws) -> None:
    """The daemon's clock 90 s ahead of AWS's: the modification AWS started is still this
    one, known by being new since the plan's fresh read, to the target."""
    vol = _volume(tags=ALLOWED)
    clients = Clients.for_region(REGION)
    _timing_out(clients, "after-call", READ_TIMEOUT, [])
    applier = _applier(clients)
    applier.clock = lambda: datetime.now(UTC) + timedelta(seconds=90)
    plan = applier.plan(f"{vol}:{GP3}")
    assert isinstance(plan, Plan)
    result = applier.yes(plan, dry_run=False, wait_s=0)
    assert result.outcome is Outcome.APPLIED, result.reason


class _Claims:
    """A cluster whose claim `db/data-0` is bound to the volume; its patches recorded."""

    name = None

    def __init__(self, volume_id: str) -> None:
        self.volume_id, self.calls = volume_id, []

    def claim_volume(self, namespace: str, name: str) -> str:
        return self.volume_id

    def ensure_class(self, manifest: Any, dry_run: bool) -> str:
        self.calls.append(("class", dry_run))
        return "created"

    def patch_claim(self, namespace: str, name: str, patch: Any, dry_run: bool) -> None:
        self.calls.append(("patch", dry_run))


def test_a_claim_patched_is_recorded_before_the_driver_is_waited_for(aws) -> None:
    claim = [
        {"Key": "kubernetes.io/created-for/pvc/namespace", "Value": "db"},
        {"Key": "kubernetes.io/created-for/pvc/name", "Value": "data-0"},
        {"Key": "ebs.csi.aws.com/cluster", "Value": "true"},
    ]
    vol = _volume(tags=[*ALLOWED, *claim])
    accepted: list[Any] = []
    applier = _applier(Clients.for_region(REGION), accepted)
    cluster = _Claims(vol)
    applier.cluster = cluster  # type: ignore[assignment]
    plan = applier.plan(f"{vol}:{GP3}")
    assert isinstance(plan, Plan)
    result = applier.yes(plan, dry_run=False, wait_s=0)
    assert cluster.calls == [("class", False), ("patch", False)]
    [first] = accepted
    assert not first.settled and first.fix_id == f"{vol}:{GP3}"
    assert result.outcome is Outcome.APPLIED and "PVC db/data-0 patched" in result.reason
