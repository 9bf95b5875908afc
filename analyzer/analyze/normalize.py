"""Pure: CloudWatch sums per period → per-second rates, averages and ratios.

Rates come from the Sum statistic divided by the period the datapoints really cover, never
from Average (which on Nitro means something else). EC2 metrics under basic monitoring arrive
as 5-minute points even when 1 minute was asked for, so their period is read from the data.
"""

from __future__ import annotations

import math
import operator
from array import array
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import reduce
from itertools import compress, pairwise, repeat

from analyzer.model import metrics
from analyzer.model.metrics import Measure, Namespace, Part, When
from analyzer.model.series import Series, Status, combine_status, spacing
from analyzer.model.state import NOTHING

CLOUDWATCH_RESOLUTIONS = (60, 300, 3600)
Raw = Mapping[str, Series]


def detect_period(series: Series, requested_s: int) -> int:
    """The resolution the datapoints cover: the coarsest CloudWatch resolution that every gap
    between consecutive timestamps is a whole multiple of, and never finer than requested."""
    stamps = series.timestamps
    if len(stamps) < 2:
        return requested_s
    gaps = [int((b - a).total_seconds()) for a, b in pairwise(stamps)]
    step = reduce(math.gcd, gaps)
    detected = requested_s
    for resolution in CLOUDWATCH_RESOLUTIONS:
        if resolution > requested_s and step % resolution == 0:
            detected = resolution
    return detected


def with_detected_period(series: Series) -> Series:
    period = detect_period(series, series.period_s)
    if period == series.period_s:
        return series
    return Series(series.timestamps, series.values, period, series.status, series.error)


def rate(sums: Series) -> Series:
    """Sum per period → per second. rate × period = sum, exactly."""
    # Built from a list, not an iterator: an array grown from an iterator keeps spare room.
    values = array("d", list(map(operator.truediv, sums.values, repeat(float(sums.period_s)))))
    return Series(sums.timestamps, values, sums.period_s, sums.status, sums.error)


def add(*parts: Series, grid: Grid | None = None) -> Series:
    """Pointwise sum over the union of timestamps; a part missing at a timestamp counts as 0
    there (CloudWatch omits a datapoint where nothing happened), but a failed part fails all.
    `grid`: the layout of parts on the same periods as these, worked out once for several
    sums (an instance's measures, each summed over its volumes)."""
    status, error = combine_status(*parts)
    period = max(p.period_s for p in parts)
    if status is not Status.OK:
        return Series((), (), period, status, error)
    present = [p for p in parts if p.timestamps]
    if present and all(p.timestamps == present[0].timestamps for p in present):
        # The usual case: parts fetched together, on the same periods. Sum them as arrays.
        values = array("d", present[0].values)
        for part in present[1:]:
            values = array("d", list(map(operator.add, values, part.values)))
        return Series(present[0].timestamps, values, period, Status.OK)
    if grid is None or not grid.fits(present):
        grid = Grid.of(present)
    if grid is not None and grid.period_s == period:
        return grid.add(present)
    totals: dict[datetime, float] = {}
    for part in parts:
        for stamp, value in part.points():
            totals[stamp] = totals.get(stamp, 0.0) + value
    return Series.of(totals.items(), period)


@dataclass(frozen=True, slots=True)
class Grid:
    """Where series that each cover an unbroken run of periods lie on their union, itself one
    unbroken run (a resource's volumes, polled minutes apart): such series are added by
    offset into one array, without a table of timestamps."""

    stamps: tuple[datetime, ...]
    period_s: int
    parts: tuple[tuple[datetime, ...], ...]
    """The timestamps of each part, in the order of `offsets`."""
    offsets: tuple[int, ...]

    @classmethod
    def of(cls, parts: Sequence[Series]) -> Grid | None:
        """The layout of these parts (none empty); None where they do not make one run."""
        if not parts:
            return None
        period = parts[0].period_s
        step = timedelta(seconds=period)
        stamps: tuple[datetime, ...] = ()
        for part in sorted(parts, key=lambda p: p.timestamps[0]):
            first, last = part.timestamps[0], part.timestamps[-1]
            if part.period_s != period or last - first != step * (len(part) - 1):
                return None
            if not stamps:
                stamps = part.timestamps
                continue
            if (first - stamps[0]) % step or first > stamps[-1] + step:
                return None
            if last > stamps[-1]:
                stamps += part.timestamps[(stamps[-1] - first) // step + 1 :]
        offsets = tuple((p.timestamps[0] - stamps[0]) // step for p in parts)
        return cls(stamps, period, tuple(p.timestamps for p in parts), offsets)

    def fits(self, parts: Sequence[Series]) -> bool:
        """Whether `parts` have the very timestamps of the parts this grid was laid out for."""
        return len(parts) == len(self.parts) and all(
            p.timestamps == mine for p, mine in zip(parts, self.parts, strict=True)
        )

    def add(self, parts: Sequence[Series]) -> Series:
        totals = array("d", bytes(8 * len(self.stamps)))
        for part, at in zip(parts, self.offsets, strict=True):
            end = at + len(part)
            totals[at:end] = array("d", map(operator.add, totals[at:end], part.values))
        return Series(self.stamps, totals, self.period_s, Status.OK)


def divide(
    numerator: Series, denominator: Series, transform: Callable[[float, float], float] | None = None
) -> Series:
    """Pointwise ratio where both have a point and the denominator is positive."""
    status, error = combine_status(numerator, denominator)
    if status is Status.ERROR:
        return Series((), (), numerator.period_s, status, error)
    if transform is None and numerator.timestamps == denominator.timestamps:
        # Parts fetched together: no table of timestamps needed.
        period = numerator.period_s
        if not denominator.values or max(denominator.values) <= 0:
            return Series((), (), period, Status.NO_DATA)
        if min(denominator.values) > 0:
            quotients = array(
                "d", list(map(operator.truediv, numerator.values, denominator.values))
            )
            return Series(numerator.timestamps, quotients, period, Status.OK)
        keep = [d > 0 for d in denominator.values]
        ratios = [n / d for n, d in zip(numerator.values, denominator.values, strict=True) if d > 0]
        stamps = tuple(compress(numerator.timestamps, keep))
        return Series(
            stamps, array("d", ratios), numerator.period_s, Status.OK if stamps else Status.NO_DATA
        )
    den = dict(denominator.points())
    points = []
    for stamp, num in numerator.points():
        d = den.get(stamp)
        if d is not None and d > 0:
            points.append((stamp, transform(num, d) if transform else num / d))
    return Series.of(points, numerator.period_s)


def _active_rate(ops: Series, idle: Series) -> Series:
    """Ops per second of time the volume was busy: catches bursts hidden by the average."""
    period = float(ops.period_s)
    busy = array("d", list(map(max, map(operator.sub, repeat(period), idle.values), repeat(0.0))))
    return divide(ops, Series(idle.timestamps, busy, idle.period_s, idle.status, idle.error))


def volume(raw: Raw) -> dict[Measure, Series]:
    """AWS/EBS metrics of one volume → its normalized measures. Where the CloudWatch agent's
    metrics were read in place of some of them (`model/metrics.py`), those: the same parts in
    the same units, and the exceeded checks as seconds at the cap, each also a check."""
    out = _block_device(_Parts(Namespace.EBS, raw, also=Namespace.AGENT))
    for seconds, check in _AT_CAP.items():
        if seconds in out and check not in out:
            out[check] = _flags(out[seconds])
    return out


_AT_CAP = {
    Measure.IOPS_AT_CAP: Measure.IOPS_EXCEEDED,
    Measure.THROUGHPUT_AT_CAP: Measure.THROUGHPUT_EXCEEDED,
}


def _at_spacing(series: Series) -> Series:
    period = spacing(series)
    if period == series.period_s:
        return series
    return Series(series.timestamps, series.values, period, series.status, series.error)


def _flags(seconds: Series) -> Series:
    """Seconds at a cap in each period → 1 where there were any, as AWS's exceeded check."""
    return seconds.map(lambda v: 1.0 if v > 0 else 0.0)


def instance(raw: Raw) -> dict[Measure, Series]:
    """AWS/EC2 EBS metrics of one instance (the sum over its volumes) → normalized measures."""
    detected = {name: with_detected_period(series) for name, series in raw.items()}
    return _block_device(_Parts(Namespace.EC2, detected))


class _Parts:
    """The fetched series of one resource, looked up by what they feed (the catalogue)."""

    def __init__(self, namespace: Namespace, raw: Raw, also: Namespace | None = None) -> None:
        self.namespace = namespace
        self.raw = raw
        self.also = also
        """A namespace whose metrics stand in for the namespace's own where they were read."""

    def has(self, part: Part) -> bool:
        return metrics.feeding(self.namespace, part) is not None

    def __getitem__(self, part: Part) -> Series:
        metric = metrics.feeding(self.namespace, part)
        if metric is None:
            return NOTHING
        found = self.raw.get(metric.name)
        if found is None and self.also is not None:
            other = metrics.feeding(self.also, part)
            found = self.raw.get(other.name) if other is not None else None
            # The agent publishes each interval's growth: read at its interval, where it is
            # longer than the period asked (five minutes: one point of five minutes' I/O).
            found = _at_spacing(found) if found is not None else None
        return NOTHING if found is None else found

    def gauges(self) -> dict[Measure, Series]:
        """The measures CloudWatch gives as they are (balances, queue, checks, memory)."""
        out: dict[Measure, Series] = {}
        for namespace in (self.namespace, self.also):
            for metric in metrics.gauges(namespace) if namespace is not None else ():
                if metric.name in self.raw and isinstance(metric.feeds, Measure):
                    out.setdefault(metric.feeds, self.raw[metric.name])
        return out


def _block_device(parts: _Parts) -> dict[Measure, Series]:
    read_ops, write_ops = parts[Part.READ_OPS], parts[Part.WRITE_OPS]
    read_bytes, write_bytes = parts[Part.READ_BYTES], parts[Part.WRITE_BYTES]
    total_ops = add(read_ops, write_ops)
    total_bytes = add(read_bytes, write_bytes)
    # Reads and writes apart are read by no rule on a volume or an instance: not worked out.
    out: dict[Measure, Series] = {
        Measure.IOPS: rate(total_ops),
        Measure.THROUGHPUT: rate(total_bytes),
        Measure.AVG_IO_SIZE: divide(total_bytes, total_ops),
    }
    if parts.has(Part.READ_TIME):
        total_time = add(parts[Part.READ_TIME], parts[Part.WRITE_TIME])
        out[Measure.LATENCY] = divide(total_time, total_ops)
    if parts.has(Part.IDLE_TIME):
        out[Measure.ACTIVE_IOPS] = _active_rate(total_ops, parts[Part.IDLE_TIME])
    return out | parts.gauges()


def db_instance(raw: Raw) -> dict[Measure, Series]:
    """AWS/RDS metrics of one DB instance (rates already per second) → normalized measures."""
    parts = _Parts(Namespace.RDS, raw)
    read_iops, write_iops = parts[Part.READ_RATE], parts[Part.WRITE_RATE]
    read_bps, write_bps = parts[Part.READ_BYTE_RATE], parts[Part.WRITE_BYTE_RATE]
    iops = add(read_iops, write_iops)
    throughput = add(read_bps, write_bps)
    io_time = add(
        _product(parts[Part.READ_LATENCY], read_iops),
        _product(parts[Part.WRITE_LATENCY], write_iops),
    )
    out: dict[Measure, Series] = {
        Measure.READ_IOPS: read_iops,
        Measure.WRITE_IOPS: write_iops,
        Measure.IOPS: iops,
        Measure.READ_THROUGHPUT: read_bps,
        Measure.WRITE_THROUGHPUT: write_bps,
        Measure.THROUGHPUT: throughput,
        Measure.AVG_IO_SIZE: divide(throughput, iops),
        Measure.LATENCY: divide(io_time, iops),
    }
    if any(m.when is When.LOG_VOLUME and m.name in raw for m in metrics.of(Namespace.RDS)):
        out |= _log_volume(parts)
    return out | parts.gauges()


def _log_volume(parts: _Parts) -> dict[Measure, Series]:
    """A Dedicated Log Volume's rates, apart from the storage's."""
    reads, writes = parts[Part.LOG_READ_RATE], parts[Part.LOG_WRITE_RATE]
    iops = add(reads, writes)
    io_time = add(
        _product(parts[Part.LOG_READ_LATENCY], reads),
        _product(parts[Part.LOG_WRITE_LATENCY], writes),
    )
    return {
        Measure.LOG_IOPS: iops,
        Measure.LOG_THROUGHPUT: add(
            parts[Part.LOG_READ_BYTE_RATE], parts[Part.LOG_WRITE_BYTE_RATE]
        ),
        Measure.LOG_LATENCY: divide(io_time, iops),
    }


def _product(a: Series, b: Series) -> Series:
    """Pointwise product where both have a point (latency x rate = busy seconds a second)."""
    status, error = combine_status(a, b)
    if status is Status.ERROR:
        return Series((), (), a.period_s, status, error)
    other = dict(b.points())
    return Series.of([(t, v * other[t]) for t, v in a.points() if t in other], a.period_s)
