"""`ebs-analyzer savings` over a moto account: an io2 volume provisioned far above its busiest
minute in 63 days is offered the need, with the saving, the window and the peak."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from analyzer.cli import main
from tests.account import Account

NOW = datetime.now(UTC).replace(second=0, microsecond=0)


ALLOWED = {"ResourceType": "volume", "Tags": [{"Key": "ebs-analyzer/apply", "Value": "allowed"}]}


def _io2(busy: dict[float, float], days: int = 63, account: Account | None = None) -> str:
    """An io2 volume of 500 GiB at 20,000 IOPS on an m5.large, in the apply scope: 100 IOPS of
    16 KiB read once an hour for `days` days, and one minute at each `busy` moment (days ago
    → IOPS)."""
    account = account or Account()
    instance = account.instance("m5.large")
    volume = account.volume("io2", 500, instance, Iops=20_000, TagSpecifications=[ALLOWED])
    reads = [(NOW - timedelta(hours=h), 100.0 * 60) for h in range(days * 24, 0, -1)]
    _put(account, volume, reads, busy)
    return volume


def _put(account: Account, volume: str, reads: list, busy: dict[float, float]) -> None:
    reads = list(reads)
    for ago, iops in busy.items():
        # Half an hour from the quiet reads, which fall on NOW's minute of each hour.
        at = (NOW - timedelta(days=ago)).replace(minute=(NOW.minute + 30) % 60)
        reads.append((at, iops * 60))
    reads.sort()
    account.put(
        {
            (volume, "VolumeReadOps"): reads,
            (volume, "VolumeWriteOps"): [(t, 0.0) for t, _ in reads],
            (volume, "VolumeReadBytes"): [(t, v * 16_384) for t, v in reads],
            (volume, "VolumeWriteBytes"): [(t, 0.0) for t, _ in reads],
        }
    )


def _savings(capsys: pytest.CaptureFixture[str]) -> dict:
    code = main(["savings", "--format", "json", "--region", "us-east-1"])
    out = capsys.readouterr()
    assert code == 0, out.err
    return json.loads(out.out)  # type: ignore[no-any-return]


def test_an_io2_whose_busiest_minute_in_63_days_was_3000_is_offered_the_need(
    aws: None, capsys: pytest.CaptureFixture[str]
) -> None:
    volume = _io2({4.2: 3_000.0, 30.5: 2_000.0})
    found = _savings(capsys)
    [row] = [r for r in found["savings"] if r["resource_id"] == volume]
    assert row["kind"] == "iops_above_need"
    assert row["target"]["iops"] == 3_600 and row["fix_id"] == f"{volume}:iops=3600"
    assert row["monthly_saving"] == pytest.approx((20_000 - 3_600) * 0.065, abs=0.01)
    assert row["window_days"] == pytest.approx(63, abs=0.5)
    assert row["peak"]["iops"]["value"] == 3_000
    assert row["peak"]["iops"]["period_s"] == 60
    assert row["alternative"]["kind"] == "io2_to_gp3"
    assert found["total_monthly_saving"] >= row["monthly_saving"]
    # 14 metrics a volume (its instance's root volume too), once.
    assert found["watch_cost"]["this_run_metrics_requested"] == 14 * found["volumes_read"]


def test_one_minute_at_18000_in_the_window_bounds_the_offer(
    aws: None, capsys: pytest.CaptureFixture[str]
) -> None:
    volume = _io2({4.2: 3_000.0, 40.5: 18_000.0})
    [row] = [r for r in _savings(capsys)["savings"] if r["resource_id"] == volume]
    assert row["target"]["iops"] <= 18_000 * 1.2
    assert row["target"]["iops"] >= 18_000 * 1.2
    assert row["peak"]["iops"]["value"] == 18_000
    assert row["peak"]["iops"]["period_s"] == 300


def test_a_past_shorter_than_a_fortnight_offers_nothing(
    aws: None, capsys: pytest.CaptureFixture[str]
) -> None:
    volume = _io2({2.2: 3_000.0}, days=10)
    assert [r for r in _savings(capsys)["savings"] if r["resource_id"] == volume] == []


def test_the_table_names_the_cut_its_saving_and_its_peak(
    aws: None, capsys: pytest.CaptureFixture[str]
) -> None:
    volume = _io2({4.2: 3_000.0})
    assert main(["savings", "--region", "us-east-1"]) == 0
    out = capsys.readouterr()
    assert f"{volume}  saves $1,066.00 a month" in out.out
    assert "io2 500 GiB, 20,000 IOPS → io2 500 GiB, 3,600 IOPS" in out.out
    assert "iops: its busiest minute in 63 days" in out.out
    assert f"apply: ebs-analyzer apply {volume}:iops=3600" in out.out
    assert "Total: $" in out.out
    assert "fetched 28 metrics" in out.err  # the volume, and its instance's root volume


def _iops(volume: str) -> int:
    import boto3

    found = boto3.client("ec2", "us-east-1").describe_volumes(VolumeIds=[volume])["Volumes"][0]
    return int(found["Iops"])


def _apply(fix: str) -> list[str]:
    return ["apply", fix, "--region", "us-east-1", "--yes", "--wait", "0"]


def test_apply_of_the_cut_goes_ahead_where_the_past_read_afresh_stays_below_it(
    aws: None, capsys: pytest.CaptureFixture[str]
) -> None:
    volume = _io2({4.2: 3_000.0})
    [row] = [r for r in _savings(capsys)["savings"] if r["resource_id"] == volume]
    assert main(_apply(row["fix_id"])) == 0, capsys.readouterr()
    assert _iops(volume) == 3_600


def test_apply_of_a_cut_whose_volume_got_busier_since_is_refused_with_the_new_peak(
    aws: None, capsys: pytest.CaptureFixture[str]
) -> None:
    account = Account()
    volume = _io2({4.2: 3_000.0}, account=account)
    [row] = [r for r in _savings(capsys)["savings"] if r["resource_id"] == volume]
    # Since the finding: a minute at 5,000 IOPS, six hours ago.
    _put(account, volume, [], {0.25: 5_000.0})
    assert main(_apply(row["fix_id"])) == 3
    err = capsys.readouterr().err
    assert f"{volume} is busier than the cut allows" in err
    assert "reached 5,000 IOPS at" in err and "against the target's 3,600" in err
    assert _iops(volume) == 20_000


def test_a_cut_whose_past_is_not_read_is_refused(
    aws: None, capsys: pytest.CaptureFixture[str]
) -> None:
    volume = _io2({4.2: 3_000.0})
    assert main([*_apply(f"{volume}:iops=3600"), "--no-past"]) == 3
    assert "a cut is applied only where its past proves it" in capsys.readouterr().err
    assert _iops(volume) == 20_000


def test_where_no_past_can_be_read_it_says_so_and_shows_no_table(
    aws: None, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from analyzer.errors import AwsAccessError
    from analyzer.live import fleet_savings

    _io2({4.2: 3_000.0})

    def refused(*_: object) -> None:
        raise AwsAccessError("cloudwatch:GetMetricData in us-east-1: AccessDenied")

    monkeypatch.setattr(fleet_savings.peaks, "read", refused)
    assert main(["savings", "--region", "us-east-1"]) == 3
    out = capsys.readouterr()
    assert out.out == ""  # never "nothing to save" about a past not read
    assert "the past of no volume could be read: cloudwatch:GetMetricData" in out.err
    assert "AccessDenied" in out.err and len(out.err.strip().splitlines()) == 2


def test_a_volume_whose_past_fails_is_named_and_the_others_are_weighed(
    aws: None, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from analyzer.errors import AwsCallError
    from analyzer.live import fleet_savings

    volume = _io2({4.2: 3_000.0})
    real = fleet_savings.peaks.read

    def some(metrics, vol, *rest):  # type: ignore[no-untyped-def]
        if vol.volume_id != volume:
            raise AwsCallError("cloudwatch:GetMetricData in us-east-1: ThrottlingException")
        return real(metrics, vol, *rest)

    monkeypatch.setattr(fleet_savings.peaks, "read", some)
    assert main(["savings", "--region", "us-east-1"]) == 0
    out = capsys.readouterr()
    assert f"{volume}  saves $1,066.00 a month" in out.out
    assert "could not be read (nothing is offered on them: cloudwatch:GetMetricData" in out.err


def test_once_with_savings_carries_them_beside_the_findings_and_never_as_one(
    aws: None, capsys: pytest.CaptureFixture[str]
) -> None:
    volume = _io2({4.2: 3_000.0})
    assert main(["once", "--savings", "--format", "json", "--region", "us-east-1"]) == 0
    report = json.loads(capsys.readouterr().out)
    [row] = [r for r in report["savings"] if r["resource_id"] == volume]
    assert row["fix_id"] == f"{volume}:iops=3600" and row["monthly_saving"] == 1_066.0
    assert report["total_monthly_saving"] >= 1_066.0
    assert not [f for f in report["findings"] if f["resource_id"] == volume]
    assert main(["once", "--savings", "--region", "us-east-1"]) == 0
    text = capsys.readouterr().out
    assert "SAVINGS (1)" in text and f"  {volume}  saves $1,066.00 a month" in text


def test_once_without_savings_reads_no_long_past(
    aws: None, capsys: pytest.CaptureFixture[str]
) -> None:
    _io2({4.2: 3_000.0})
    assert main(["once", "--format", "json", "--region", "us-east-1"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert "savings" not in report and "total_monthly_saving" not in report


def test_once_with_savings_writes_them_in_the_price_lists_currency(
    aws: None, capsys: pytest.CaptureFixture[str], tmp_path
) -> None:
    volume = _io2({4.2: 3_000.0})
    priced = tmp_path / "prices.yaml"
    priced.write_text("currency: EUR\n")
    config = tmp_path / "config.yaml"
    config.write_text(f"prices: {priced}\npricing_api: false\n")
    assert main(["once", "--savings", "--region", "us-east-1", "--config", str(config)]) == 0
    assert f"  {volume}  saves EUR 1,066.00 a month" in capsys.readouterr().out


def _rds_io1(busiest: float, recent: float | None = None) -> str:
    """A MySQL instance on io1 400 GiB at 20,000 IOPS, in the apply scope: 300 IOPS of 16 KiB
    reads once an hour for 63 days, one minute at `busiest` 30 days ago, and at `recent` two
    days ago where given, as AWS/RDS publishes them (rates)."""
    import boto3

    boto3.client("rds", region_name="us-east-1").create_db_instance(
        DBInstanceIdentifier="orders",
        Engine="mysql",
        DBInstanceClass="db.m5.large",
        AllocatedStorage=400,
        StorageType="io1",
        Iops=20_000,
        MasterUsername="admin",
        MasterUserPassword="password123",
        Tags=[{"Key": "ebs-analyzer/apply", "Value": "allowed"}],
    )
    reads = [(NOW - timedelta(hours=h), 300.0) for h in range(63 * 24, 0, -1)]
    reads.append(((NOW - timedelta(days=30)).replace(minute=(NOW.minute + 30) % 60), busiest))
    if recent is not None:
        reads.append(((NOW - timedelta(days=2)).replace(minute=(NOW.minute + 30) % 60), recent))
    reads.sort()
    Account().put(
        {
            ("orders", "ReadIOPS"): reads,
            ("orders", "WriteIOPS"): [(t, 0.0) for t, _ in reads],
            ("orders", "ReadThroughput"): [(t, v * 16_384) for t, v in reads],
            ("orders", "WriteThroughput"): [(t, 0.0) for t, _ in reads],
        }
    )
    return "orders"


def _rds_prices(tmp_path) -> list[str]:
    """A price file with RDS's io1 storage (us-east-1, Single-AZ): $0.125 a GB-month and
    $0.10 an IOPS-month."""
    priced = tmp_path / "prices.yaml"
    priced.write_text("rds_storage:\n  io1:\n    per_gib: 0.125\n    per_iops: 0.10\n")
    config = tmp_path / "config.yaml"
    config.write_text(f"prices: {priced}\npricing_api: false\n")
    return ["--config", str(config)]


def test_an_rds_instance_provisioned_far_above_its_busiest_minute_is_offered_the_need(
    aws: None, capsys: pytest.CaptureFixture[str], tmp_path
) -> None:
    db = _rds_io1(3_000.0)
    args = ["savings", "--format", "json", "--region", "us-east-1", *_rds_prices(tmp_path)]
    assert main(args) == 0
    found = json.loads(capsys.readouterr().out)
    [row] = [r for r in found["savings"] if r["resource_id"] == db]
    assert row["resource_type"] == "db_instance" and row["kind"] == "iops_above_need"
    assert row["fix_id"] == "orders:iops=3600" and row["target"]["iops"] == 3_600
    assert row["monthly_saving"] == pytest.approx((20_000 - 3_600) * 0.10, abs=0.01)
    assert row["peak"]["iops"]["value"] == pytest.approx(3_000)


def test_an_rds_instance_without_its_iops_price_is_named_not_weighed(
    aws: None, capsys: pytest.CaptureFixture[str]
) -> None:
    _rds_io1(3_000.0)
    assert main(["savings", "--format", "json", "--region", "us-east-1"]) == 0
    out = capsys.readouterr()
    assert [r for r in json.loads(out.out)["savings"] if r["resource_id"] == "orders"] == []
    assert "1 RDS instance(s) with provisioned IOPS not weighed" in out.err
    assert "orders" in out.err


def _rds_iops() -> int:
    import boto3

    rds = boto3.client("rds", region_name="us-east-1")
    return int(rds.describe_db_instances(DBInstanceIdentifier="orders")["DBInstances"][0]["Iops"])


def test_apply_of_an_rds_cut_goes_ahead_where_its_fortnight_proves_it(
    aws: None, capsys: pytest.CaptureFixture[str], tmp_path
) -> None:
    _rds_io1(3_000.0)
    assert main([*_apply("orders:iops=3600"), *_rds_prices(tmp_path)]) == 0, capsys.readouterr().err
    assert _rds_iops() == 3_600


def test_apply_of_an_rds_cut_whose_fortnight_got_busier_is_refused_unchanged(
    aws: None, capsys: pytest.CaptureFixture[str], tmp_path
) -> None:
    _rds_io1(3_000.0, recent=5_000.0)
    assert main([*_apply("orders:iops=3600"), *_rds_prices(tmp_path)]) == 3
    err = capsys.readouterr().err
    assert "5,000 IOPS" in err
    assert _rds_iops() == 20_000
