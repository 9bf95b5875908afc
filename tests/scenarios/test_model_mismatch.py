"""What CloudWatch shows against the model, replayed through moto: a rate that stays clearly
above a modelled limit is the model's error, said as such, never a cap finding or a fix.

A gp3 volume described with its included 3,000 IOPS that CloudWatch shows at 4,800 (a
modification DescribeVolumes does not show yet, or a limit the model gets wrong) used to be
"IOPS pinned at its 3,000 IOPS volume cap (160 % of it)".
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from structlog.testing import capture_logs

from analyzer import settings
from analyzer.analyze import rules
from analyzer.deliver.rows import to_dict
from analyzer.live.cycle import Analyzer
from analyzer.model.units import KIB
from tests.account import Account

START = datetime(2026, 11, 21, 6, 0, tzinfo=UTC)


def test_a_volume_above_its_modelled_iops_cap_is_a_model_mismatch(aws: None) -> None:
    account = Account()
    instance = account.instance("m5.xlarge")
    volume = account.volume("gp3", 200, instance)
    minutes = [START + timedelta(minutes=m) for m in range(40)]
    ops, size = 4_800.0, 16 * KIB
    account.put(
        {
            (volume, "VolumeReadOps"): [(t, ops * 60) for t in minutes],
            (volume, "VolumeWriteOps"): [(t, 0.0) for t in minutes],
            (volume, "VolumeReadBytes"): [(t, ops * size * 60) for t in minutes],
            (volume, "VolumeWriteBytes"): [(t, 0.0) for t in minutes],
            (volume, "VolumeIdleTime"): [(t, 0.0) for t in minutes],
        }
    )
    now = START + timedelta(minutes=40, seconds=130)
    config = settings.load({"region": [account.region]})
    analyzer = Analyzer(config, rules.load())
    with capture_logs() as logs:
        result = analyzer.run(now)
        analyzer.run(now + timedelta(minutes=1))
    said = [e for e in logs if e["event"] == "model.mismatch"]
    assert len(said) == 1 and said[0]["resource"] == volume  # once, when it starts

    caps = [f for f in result.findings if f.resource.resource_id == volume and "cap" in f.rule]
    assert caps == []
    row = next(
        r
        for r in to_dict(result.snapshot.generated_at, result.readings, result.findings)[
            "resources"
        ]
        if r["resource_id"] == volume
    )
    assert row["status"] == "model_mismatch"
    assert row["model_mismatch"] == [
        "the volume iops limit model disagrees with what CloudWatch shows: "
        "160% of it on average over 15 min"
    ]
