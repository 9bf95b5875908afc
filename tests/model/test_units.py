"""Units: how rates, sizes and durations read, and the durations settings and rules accept."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import TypeAdapter, ValidationError

from analyzer.model.resources import ResourceType
from analyzer.model.units import (
    GIB,
    KIB,
    MB,
    MIB,
    TIB,
    Duration,
    PositiveDuration,
    Unit,
    as_written,
    duration,
    format_rate,
    iops,
    mbps,
    mibps,
    parse_duration,
    size,
)


def test_binary_and_decimal_units() -> None:
    assert (KIB, MIB, GIB, TIB, MB) == (2**10, 2**20, 2**30, 2**40, 10**6)


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (-5, "0 s"),
        (0, "0 s"),
        (89, "89 s"),
        (90, "2 min"),
        (27 * 60, "27 min"),
        (119 * 60, "119 min"),
        (120 * 60, "2 h 00 min"),
        (2 * 3600 + 5 * 60, "2 h 05 min"),
        (47 * 3600 + 59 * 60, "47 h 59 min"),
        (48 * 3600, "2 d 0 h"),
        (3 * 86400 + 4 * 3600, "3 d 4 h"),
    ],
)
def test_duration_reads_coarsely(seconds: float, text: str) -> None:
    assert duration(seconds) == text


@pytest.mark.parametrize(
    ("fn", "value", "text"),
    [
        (iops, 18_750, "18,750 IOPS"),
        (iops, 99.6, "100 IOPS"),
        (mibps, 125 * MIB, "125 MiB/s"),
        (mibps, 2.5 * MIB, "2.5 MiB/s"),
        (mibps, 1_000 * MIB, "1,000 MiB/s"),
        (mibps, 250.4 * MIB, "250 MiB/s"),
        (mbps, 593.75e6, "594 MB/s"),
        (mbps, 81.25e6, "81.2 MB/s"),
        (mbps, 10 * MB, "10 MB/s"),
        (size, 4 * KIB, "4 KiB"),
        (size, 256 * KIB, "256 KiB"),
        (size, 1.5 * KIB, "1.5 KiB"),
        (size, MIB, "1 MiB"),
        (size, 1.5 * MIB, "1.5 MiB"),
    ],
)
def test_numbers_read_whole_from_100_and_to_a_tenth_below(fn: Any, value: float, text: str) -> None:
    assert fn(value) == text


@pytest.mark.parametrize(
    ("raw", "seconds"),
    [
        ("90s", 90.0),
        ("15m", 900.0),
        ("1h", 3600.0),
        ("1d", 86400.0),
        ("250ms", 0.25),
        (" 2.5h ", 9000.0),
        ("30", 30.0),
        (30, 30.0),
        (1.5, 1.5),
    ],
)
def test_parse_duration(raw: Any, seconds: float) -> None:
    assert parse_duration(raw) == seconds


@pytest.mark.parametrize("raw", ["15 minutes", "1w", "-5m", "", True])
def test_parse_duration_refuses_what_is_not_a_duration(raw: Any) -> None:
    with pytest.raises(ValueError):
        parse_duration(raw)


def test_duration_fields_parse_and_bound() -> None:
    assert TypeAdapter(Duration).validate_python("0s") == 0.0
    assert TypeAdapter(PositiveDuration).validate_python("5m") == 300.0
    with pytest.raises(ValidationError):
        TypeAdapter(Duration).validate_python(-1)
    with pytest.raises(ValidationError):
        TypeAdapter(PositiveDuration).validate_python("0s")
    with pytest.raises(ValidationError):
        TypeAdapter(Duration).validate_python(None)


@pytest.mark.parametrize(
    ("value", "unit", "owner", "text"),
    [
        (3_000, Unit.IOPS, ResourceType.VOLUME, "3,000 IOPS"),
        (95.4, Unit.PERCENT, ResourceType.INSTANCE, "95%"),
        (125 * MIB, Unit.BYTES_PER_SECOND, ResourceType.VOLUME, "125 MiB/s"),
        (125 * MIB, Unit.BYTES_PER_SECOND, ResourceType.INSTANCE, "131 MB/s"),
    ],
)
def test_format_rate_in_the_unit_aws_quotes(
    value: float, unit: Unit, owner: ResourceType, text: str
) -> None:
    assert format_rate(value, unit, owner) == text


@pytest.mark.parametrize(
    ("seconds", "written"),
    [(1_296_000, "15d"), (3600, "1h"), (5400, "90m"), (60, "1m"), (90, "90s"), (0.5, "0.5s")],
)
def test_a_duration_is_written_in_its_largest_whole_unit(seconds: float, written: str) -> None:
    assert as_written(seconds) == written
    assert parse_duration(written) == seconds
