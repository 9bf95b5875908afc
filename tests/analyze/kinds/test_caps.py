import pytest

from analyzer.analyze.kinds.caps import IopsCap, ThroughputCap
from analyzer.model.findings import Bottleneck, Severity
from analyzer.model.metrics import Measure
from analyzer.model.resources import InstanceType
from analyzer.model.series import Series
from analyzer.model.units import KIB, MB, MIB
from tests.helpers import evaluate, instance_state, series, volume_state

IOPS = IopsCap(id="iops", resource_types=["volume", "instance"], severity="warning")
THROUGHPUT = ThroughputCap(id="tput", resource_types=["volume", "instance"], severity="warning")
R6I = InstanceType("r6i.8xlarge", 40_000, 40_000, 1_250 * MB, 1_250 * MB, nitro=True)


def gp3(iops_values, io_bytes=16 * KIB, exceeded=None, held=None, **kw):
    measures = {
        Measure.IOPS: series(iops_values),
        Measure.THROUGHPUT: series([v * io_bytes for v in iops_values]),
        Measure.AVG_IO_SIZE: series([io_bytes] * len(iops_values)),
    }
    if exceeded is not None:
        measures[Measure.IOPS_EXCEEDED] = series(exceeded)
    if held is not None:
        measures[Measure.IOPS_AT_CAP] = series(held)
    return volume_state(
        "gp3", 500, measures, iops=kw.get("iops", 3_000), throughput=kw.get("throughput", 125)
    )


def test_sustained_saturation_fires_with_evidence():
    finding = evaluate(IOPS, gp3([2_990] * 30))
    assert finding is not None
    assert finding.bottleneck is Bottleneck.VOLUME_IOPS
    assert finding.severity is Severity.WARNING
    assert finding.limit == 3_000
    assert finding.observed == pytest.approx(2_990)
    assert finding.evidence["datapoints"] == 15
    assert finding.evidence["period_seconds"] == 60
    assert finding.evidence["window_seconds"] == 900
    assert finding.evidence["saturated_datapoints"] == 15
    assert "3,000 IOPS volume cap" in finding.summary


def test_one_noisy_minute_does_not_fire():
    assert evaluate(IOPS, gp3([1_000] * 29 + [3_000])) is None


def test_mostly_saturated_fires_but_half_does_not():
    assert evaluate(IOPS, gp3([1_000] * 17 + [3_000] * 13)) is not None  # 13 of 15
    assert evaluate(IOPS, gp3([1_000, 3_000] * 15)) is None


def test_exceeded_check_counts_a_minute_whose_average_hides_the_burst():
    state = gp3([2_000] * 30, exceeded=[1] * 30)
    assert evaluate(IOPS, state) is not None
    no_check = IOPS.model_copy(update={"use_exceeded_check": False})
    assert evaluate(no_check, state) is None


def test_the_agents_exceeded_time_says_how_long_each_minute_was_held_at_the_cap():
    """The CloudWatch agent's exceeded time: 20 s of each minute at the cap, hidden in minute
    averages at two thirds of it."""
    state = gp3([2_000] * 30, exceeded=[1] * 30, held=[20.0] * 30)
    finding = evaluate(IOPS, state)
    assert finding is not None
    assert "cap for about 20 s of each minute in 15 of 15 minutes" in finding.summary
    assert "timed by the CloudWatch agent" in finding.summary
    assert finding.evidence["seconds_at_cap_per_minute"] == 20.0
    assert finding.evidence["busy_rate_datapoints"] == 0
    # AWS/EBS's checks alone: the same finding, without the seconds.
    plain = evaluate(IOPS, gp3([2_000] * 30, exceeded=[1] * 30))
    assert plain is not None and plain.evidence["seconds_at_cap_per_minute"] is None
    assert "timed" not in plain.summary


def test_the_agents_exceeded_time_times_a_throughput_cap_too():
    mib = [60 * MIB] * 30  # 48% of a 125 MiB/s gp3's throughput on average
    state = volume_state(
        "gp3",
        500,
        {
            Measure.IOPS: series([60 * MIB / (256 * KIB)] * 30),
            Measure.THROUGHPUT: series(mib),
            Measure.AVG_IO_SIZE: series([256 * KIB] * 30),
            Measure.THROUGHPUT_EXCEEDED: series([1] * 30),
            Measure.THROUGHPUT_AT_CAP: series([30.0] * 30),
        },
        iops=3_000,
        throughput=125,
    )
    finding = evaluate(THROUGHPUT, state)
    assert finding is not None
    assert finding.summary.split(": ", 1)[1].startswith("throughput at its")
    assert "about 30 s of each minute" in finding.summary
    assert finding.evidence["seconds_at_cap_per_minute"] == 30.0


def test_too_few_datapoints_do_not_fire():
    assert evaluate(IOPS, gp3([3_000] * 2)) is None


def test_large_ios_count_as_several_against_the_iops_limit():
    # 1,600 IOPS of 512 KiB count as 3,200 I/Os of 256 KiB on a gp3 volume.
    state = gp3([1_600] * 30, io_bytes=512 * KIB, iops=3_000, throughput=1_000)
    finding = evaluate(IOPS, state)
    assert finding is not None


def test_throughput_cap_on_a_volume_names_mib():
    state = gp3([1_000] * 30, io_bytes=128 * KIB, iops=16_000, throughput=125)
    finding = evaluate(THROUGHPUT, state)
    assert finding is not None
    assert finding.bottleneck is Bottleneck.VOLUME_THROUGHPUT
    assert finding.limit == 125 * MIB
    assert "125 MiB/s volume cap" in finding.summary
    assert finding.evidence["iops_utilization"] == pytest.approx(1_000 / 16_000)


def test_gp2_at_baseline_without_credits_is_left_to_the_credit_rules():
    measures = {
        Measure.IOPS: series([150] * 30),
        Measure.THROUGHPUT: series([150 * 16384] * 30),
        Measure.BURST_BALANCE: series([0] * 30),
    }
    assert evaluate(IOPS, volume_state("gp2", 50, measures)) is None


def test_gp2_at_its_burst_ceiling_with_credits_is_capped():
    measures = {
        Measure.IOPS: series([3_000] * 30),
        Measure.THROUGHPUT: series([3_000 * 4096] * 30),
        Measure.BURST_BALANCE: series([60] * 30),
    }
    finding = evaluate(IOPS, volume_state("gp2", 50, measures))
    assert finding is not None and finding.limit == 3_000


def test_no_data_and_failed_fetches_never_fire():
    assert evaluate(IOPS, gp3([])) is None
    failed = volume_state("gp3", 500, {Measure.IOPS: Series.failed("Throttling")}, iops=3_000)
    assert evaluate(IOPS, failed) is None


def test_standard_volumes_have_only_approximate_limits():
    measures = {Measure.IOPS: series([500] * 30), Measure.THROUGHPUT: series([500 * 4096] * 30)}
    assert evaluate(IOPS, volume_state("standard", 100, measures)) is None


def test_instance_cap_and_its_next_bottleneck_is_the_busiest_volume():
    volume_a = gp3([7_000] * 30, io_bytes=128 * KIB, iops=16_000, throughput=1_000)
    volume_b = volume_state(
        "gp3",
        500,
        {Measure.IOPS: series([500] * 30), Measure.THROUGHPUT: series([500 * 131072] * 30)},
        iops=3_000,
        throughput=125,
        volume_id="vol-2",
    )
    instance = instance_state(
        R6I,
        {Measure.IOPS: series([9_500] * 30), Measure.THROUGHPUT: series([1_245 * MB] * 30)},
        volume_ids=("vol-1", "vol-2"),
    )
    finding = evaluate(THROUGHPUT, instance, volume_a, volume_b)
    assert finding is not None
    assert finding.bottleneck is Bottleneck.INSTANCE_THROUGHPUT
    assert "1,250 MB/s instance EBS cap" in finding.summary
    nxt = finding.next_bottleneck
    # vol-1 carries 875 MiB/s of its 1,000 (x1.14); vol-2 62.5 of 125 (x2); the instance's
    # IOPS are far from their limit.
    assert nxt is not None
    assert nxt.headroom == pytest.approx(1_000 / 875, rel=0.001)
    assert nxt.resource_id == "vol-1"
    assert nxt.bottleneck is Bottleneck.VOLUME_THROUGHPUT


def test_rule_rejects_resource_types_its_kind_does_not_cover():
    from analyzer.analyze.kinds.memory import MemoryPressure

    with pytest.raises(ValueError, match="does not apply to volume"):
        MemoryPressure(id="x", resource_types=["volume"], severity="warning")
