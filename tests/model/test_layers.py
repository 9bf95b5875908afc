"""Layers and buckets: each resource's limits and credit buckets, described one way."""

from __future__ import annotations

import pytest

from analyzer.model.findings import Bottleneck
from analyzer.model.layers import Bucket, Layer, balance_metric, buckets_of, layers_of
from analyzer.model.limits import Envelope, gp2, gp3, instance_type_envelope, st1
from analyzer.model.metrics import Measure
from analyzer.model.resources import InstanceType, ResourceType
from analyzer.model.units import MIB, Unit
from tests.fakes import M5

GP2_50 = gp2(50)
"""3,000 IOPS while credits last, a 150 IOPS baseline; 128 MiB/s, 37.5 MiB/s without."""
M5_EBS = instance_type_envelope(M5)
assert M5_EBS is not None
STORAGE = Layer(GP2_50, storage=True)
INSTANCE = Layer(M5_EBS, storage=False)
LOG = Layer(gp3(3_000, 125), storage=True, log=True)


@pytest.mark.parametrize(
    ("layer", "owner", "iops_balance", "bytes_balance", "name"),
    [
        (STORAGE, ResourceType.VOLUME, Measure.BURST_BALANCE, Measure.BURST_BALANCE, "volume"),
        (INSTANCE, ResourceType.INSTANCE, Measure.IO_BALANCE, Measure.BYTE_BALANCE, "instance EBS"),
        (LOG, ResourceType.VOLUME, Measure.BURST_BALANCE, Measure.BURST_BALANCE, "log volume"),
    ],
)
def test_layer_owner_balances_and_name(
    layer: Layer, owner: ResourceType, iops_balance: Measure, bytes_balance: Measure, name: str
) -> None:
    assert layer.owner is owner
    assert layer.balance(Unit.IOPS) is iops_balance
    assert layer.balance(Unit.BYTES_PER_SECOND) is bytes_balance
    assert layer.describe() == name


@pytest.mark.parametrize(
    ("layer", "unit", "measure", "bottleneck"),
    [
        (STORAGE, Unit.IOPS, Measure.IOPS, Bottleneck.VOLUME_IOPS),
        (STORAGE, Unit.BYTES_PER_SECOND, Measure.THROUGHPUT, Bottleneck.VOLUME_THROUGHPUT),
        (INSTANCE, Unit.IOPS, Measure.IOPS, Bottleneck.INSTANCE_IOPS),
        (INSTANCE, Unit.BYTES_PER_SECOND, Measure.THROUGHPUT, Bottleneck.INSTANCE_THROUGHPUT),
        (LOG, Unit.IOPS, Measure.LOG_IOPS, Bottleneck.LOG_VOLUME_IOPS),
        (LOG, Unit.BYTES_PER_SECOND, Measure.LOG_THROUGHPUT, Bottleneck.LOG_VOLUME_THROUGHPUT),
    ],
)
def test_layer_rate_and_bottleneck(
    layer: Layer, unit: Unit, measure: Measure, bottleneck: Bottleneck
) -> None:
    assert layer.rate(unit) is measure
    assert layer.bottleneck(unit) is bottleneck


@pytest.mark.parametrize(
    ("layer", "unit", "credits_left", "limit"),
    [
        (STORAGE, Unit.IOPS, True, 3_000),
        (STORAGE, Unit.IOPS, False, 150),
        (STORAGE, Unit.BYTES_PER_SECOND, True, 128 * MIB),
        (STORAGE, Unit.BYTES_PER_SECOND, False, 37.5 * MIB),
        (INSTANCE, Unit.IOPS, True, 18_750),
        (INSTANCE, Unit.IOPS, False, 3_600),
        (INSTANCE, Unit.BYTES_PER_SECOND, True, 593.75e6),
        (INSTANCE, Unit.BYTES_PER_SECOND, False, 81.25e6),
    ],
)
def test_layer_limit_falls_to_baseline_without_credits(
    layer: Layer, unit: Unit, credits_left: bool, limit: float
) -> None:
    assert layer.limit(unit, credits_left) == limit


def test_layers_of_puts_storage_before_the_instance_class() -> None:
    assert layers_of(None, None, has_storage=True) == []
    assert layers_of(GP2_50, None, has_storage=True) == [STORAGE]
    assert layers_of(M5_EBS, None, has_storage=False) == [INSTANCE]
    assert layers_of(GP2_50, M5_EBS, has_storage=True) == [STORAGE, INSTANCE]
    assert layers_of(None, M5_EBS, has_storage=True) == [INSTANCE]


@pytest.mark.parametrize(
    ("balance", "name"),
    [
        (Measure.BURST_BALANCE, "BurstBalance"),
        (Measure.IO_BALANCE, "EBSIOBalance%"),
        (Measure.BYTE_BALANCE, "EBSByteBalance%"),
    ],
)
def test_balance_metric_names_the_cloudwatch_metric(balance: Measure, name: str) -> None:
    assert balance_metric(balance) == name


GP2_BUCKET = Bucket(
    Measure.BURST_BALANCE,
    Measure.IOPS,
    Unit.IOPS,
    150,
    3_000,
    "BurstBalance",
    Bottleneck.BURST_CREDITS,
    GP2_50.bucket,
)
M5_IO = Bucket(
    Measure.IO_BALANCE,
    Measure.IOPS,
    Unit.IOPS,
    3_600,
    18_750,
    "EBSIOBalance%",
    Bottleneck.INSTANCE_BURST_CREDITS,
    None,
)
M5_BYTES = Bucket(
    Measure.BYTE_BALANCE,
    Measure.THROUGHPUT,
    Unit.BYTES_PER_SECOND,
    81.25e6,
    593.75e6,
    "EBSByteBalance%",
    Bottleneck.INSTANCE_BURST_CREDITS,
    None,
)


def test_a_gp2_volume_has_one_iops_bucket() -> None:
    assert buckets_of(ResourceType.VOLUME, GP2_50, None) == [GP2_BUCKET]
    assert GP2_BUCKET.owner is ResourceType.VOLUME


def test_an_st1_bucket_counts_throughput() -> None:
    envelope = st1(500)
    (bucket,) = buckets_of(ResourceType.VOLUME, envelope, None)
    assert (bucket.rate, bucket.unit, bucket.model) == (
        Measure.THROUGHPUT,
        Unit.BYTES_PER_SECOND,
        envelope.bucket,
    )


@pytest.mark.parametrize("envelope", [gp3(3_000, 125), gp2(1_000), None])
def test_volumes_without_a_bucket_have_none(envelope: Envelope | None) -> None:
    assert buckets_of(ResourceType.VOLUME, envelope, None) == []


def test_an_instance_that_bursts_has_an_io_and_a_byte_bucket_without_a_model() -> None:
    assert buckets_of(ResourceType.INSTANCE, M5_EBS, None) == [M5_IO, M5_BYTES]
    assert M5_IO.owner is ResourceType.INSTANCE


def test_an_instance_at_its_maximum_all_the_time_has_no_bucket() -> None:
    steady = instance_type_envelope(InstanceType("m5.24xlarge", 80_000, 80_000, 2.375e9, 2.375e9))
    assert buckets_of(ResourceType.INSTANCE, steady, None) == []
    assert buckets_of(ResourceType.INSTANCE, None, None) == []


def test_a_db_instance_has_its_storage_bucket_then_its_class_buckets() -> None:
    assert buckets_of(ResourceType.DB_INSTANCE, GP2_50, M5_EBS) == [GP2_BUCKET, M5_IO, M5_BYTES]
    assert buckets_of(ResourceType.DB_INSTANCE, gp3(None, None), M5_EBS) == [M5_IO, M5_BYTES]
