"""What CloudWatch would show for a workload, computed from the storage model.

Given an instance, its volumes, and what the application asks of each volume over time, the
simulation steps second by second: each volume serves what its caps and its credit bucket
allow, the instance scales all of them down to its EBS limits, buckets fill and drain. Each
simulated minute ends as the AWS/EBS and AWS/EC2 datapoints AWS would publish (5-minute sums
for instances under basic monitoring). The demo and the tests replay incidents with it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from functools import cached_property
from typing import Any

from analyzer.model import limits, metrics
from analyzer.model.limits import CreditBucket, Envelope
from analyzer.model.metrics import Measure, Namespace, Part
from analyzer.model.resources import InstanceType, Volume
from analyzer.sim.datapoints import Datapoints, emit, fold, statistic
from analyzer.sim.workloads import Demand

SSD_SERVICE_S = 0.0005
HDD_SERVICE_S = 0.005
INSTANCE_BURST_S = 1800.0
STALLED_QUEUE = 32.0
"""I/O outstanding on a stalled volume: submitted, never completed (a database's usual queue
depth)."""
"""Instances whose EBS baseline is below their maximum may burst 30 minutes (a full bucket)."""


@dataclass
class SimVolume:
    volume: Volume
    demand: Demand
    balance_percent: float = 100.0
    resizes: Sequence[tuple[float, int]] = ()
    """(seconds from the start, new size in GiB): grown online, the bucket comes back full."""
    stalls: Sequence[tuple[float, float]] = ()
    """(from, to) in seconds from the start: I/O submitted but none completed (an impaired
    volume): no operations, a queue that stays, the stalled-I/O check failing."""
    steady_days: float = 0.0
    """Its operations and bytes ran as in its first simulated minute, a minute an hour, for
    this many days before the start: a long past a saving is weighed on."""
    envelope: Envelope = field(init=False)
    credits: float = field(init=False, default=0.0)
    instance_type: InstanceType | None = field(init=False, default=None)
    """Its instance's type: io1 and io2 deliver less off Nitro."""

    def __post_init__(self) -> None:
        self.envelope = self._envelope()
        bucket = self.bucket
        self.credits = bucket.credits(self.balance_percent) if bucket else 0.0

    def attach(self, instance_type: InstanceType) -> None:
        """On an instance of this type: the envelope follows it (the bucket is kept)."""
        self.instance_type = instance_type
        self.envelope = self._envelope()

    def stalled(self, t: float) -> bool:
        return any(start <= t < end for start, end in self.stalls)

    def _envelope(self) -> Envelope:
        envelope = limits.volume_envelope(self.volume, self.instance_type)
        if envelope is None:
            raise ValueError(f"{self.volume.volume_type}: no model for this volume type")
        return envelope

    @property
    def bucket(self) -> CreditBucket | None:
        return self.envelope.bucket

    def modify(self, **config: Any) -> None:
        """Modified (ModifyVolume: `volume_type`, `size_gib`, `iops`, `throughput_mibps`):
        the new envelope applies at once; a bucket comes back full, as a grown gp2 volume's
        does (DOMAIN.md), and a type without one has none."""
        self.volume = replace(self.volume, **config)
        self.envelope = self._envelope()
        bucket = self.bucket
        self.credits = bucket.capacity if bucket else 0.0

    def resize(self, size_gib: int) -> None:
        """Grown online: the new envelope applies at once and the bucket comes back full."""
        self.volume = replace(self.volume, size_gib=size_gib)
        self.envelope = self._envelope()
        bucket = self.bucket
        self.credits = bucket.capacity if bucket else 0.0


@dataclass
class SimInstance:
    instance_id: str
    type_info: InstanceType
    volumes: list[SimVolume]
    detailed_monitoring: bool = False
    io_credits: float = field(init=False, default=0.0)
    byte_credits: float = field(init=False, default=0.0)

    def __post_init__(self) -> None:
        for volume in self.volumes:
            volume.attach(self.type_info)
        envelope = self.envelope
        if envelope is not None:
            self.io_credits = (envelope.iops - envelope.baseline_iops) * INSTANCE_BURST_S
            self.byte_credits = (
                envelope.throughput_bps - envelope.baseline_throughput_bps
            ) * INSTANCE_BURST_S

    @cached_property
    def envelope(self) -> Envelope | None:
        """Its type's EBS limits: the type never changes under a simulation, and every
        second reads them."""
        return limits.instance_type_envelope(self.type_info)


@dataclass
class _Minute:
    """Accumulates one minute of one resource."""

    read_ops: float = 0.0
    write_ops: float = 0.0
    read_bytes: float = 0.0
    write_bytes: float = 0.0
    read_time: float = 0.0
    write_time: float = 0.0
    idle_s: float = 0.0
    queue: float = 0.0
    stalled: float = 0.0
    balance: float = 0.0
    balance2: float = 0.0
    iops_exceeded: float = 0.0
    throughput_exceeded: float = 0.0


def _served(sim: SimVolume, t: float, reaching: float) -> tuple[float, float, float, bool, bool]:
    """What a volume serves this second before the instance's limits: (iops, io size, demand,
    IOPS exceeded, throughput exceeded). Only the share `reaching` of the demand gets past the
    instance to the volume, and only that can exceed the volume's limits."""
    envelope = sim.envelope
    demand = max(sim.demand.iops(t), 0.0)
    size = sim.demand.io_size_bytes
    if sim.stalled(t):
        return 0.0, size, demand, False, False
    credits_left = sim.bucket is None or sim.credits > 0
    iops_cap = envelope.iops_limit(credits_left) / _counted_per_op(envelope, sim.demand)
    bps_cap = envelope.throughput_limit(credits_left) / size
    served = min(demand, iops_cap, bps_cap)
    bucket = sim.bucket
    if bucket is not None:
        # Never spend more than the credits left plus what this second earns.
        served = min(
            served,
            (bucket.baseline + sim.credits) / _charge_per_op(bucket, envelope, sim.demand),
        )
    arriving = demand * reaching
    return served, size, demand, arriving > iops_cap * 1.0001, arriving > bps_cap * 1.0001


def _counted_per_op(envelope: Envelope, demand: Demand) -> float:
    """How many operations the IOPS limit counts for one submitted: several for an I/O above
    the unit; on st1/sc1 sequential I/O is merged into 1 MiB operations first, a fraction of
    one each."""
    unit = envelope.io_unit_bytes
    if unit is None:
        return 1.0
    if envelope.merges and demand.sequential:
        return demand.io_size_bytes / unit
    return max(1.0, demand.io_size_bytes / unit)


def _charge_per_op(bucket: CreditBucket, envelope: Envelope, demand: Demand) -> float:
    """What one submitted operation takes from the bucket: st1/sc1 charge merged sequential
    I/O by its bytes and any other I/O as a whole MiB; gp2 an I/O per 256 KiB."""
    if envelope.merges and demand.sequential:
        return demand.io_size_bytes
    return bucket.consumption(1.0, demand.io_size_bytes)


def _instance_share(envelope: Envelope | None, inst: SimInstance, t: float) -> float:
    """The share of the demand on all volumes that the instance's EBS limits let through."""
    if envelope is None:
        return 1.0
    iops = sum(max(s.demand.iops(t), 0.0) for s in inst.volumes)
    bps = sum(max(s.demand.iops(t), 0.0) * s.demand.io_size_bytes for s in inst.volumes)
    share = 1.0
    if iops > 0:
        share = min(share, envelope.iops_limit(inst.io_credits > 0) / iops)
    if bps > 0:
        share = min(share, envelope.throughput_limit(inst.byte_credits > 0) / bps)
    return share


class Simulation:
    """Steps an instance and its volumes through time from `start`, a minute at a time."""

    def __init__(self, instance: SimInstance, start: datetime) -> None:
        self.instance = instance
        self.start = start
        self.elapsed_s = 0
        self.each_second: Callable[[datetime, Mapping[str, Second], Second], None] | None = None
        """Told what each second did, per volume and for the instance, as it is simulated
        (a node's NVMe statistics count by the second); every second is then simulated."""

    @property
    def now(self) -> datetime:
        return self.start + timedelta(seconds=self.elapsed_s)

    def _resize(self, t: float) -> None:
        for sim in self.instance.volumes:
            for when, size in sim.resizes:
                if when == t and size != sim.volume.size_gib:
                    sim.resize(size)

    def minute(self) -> Datapoints:
        """Advance one minute; the datapoints of the minute just simulated."""
        inst = self.instance
        vol_minutes = {s.volume.volume_id: _Minute() for s in inst.volumes}
        inst_minute = _Minute()
        if self.each_second is not None:
            for _ in range(60):
                seconds = {rid: _Minute() for rid in vol_minutes}
                inst_second = _Minute()
                self._second(float(self.elapsed_s), seconds, inst_second)
                self.elapsed_s += 1
                self.each_second(self.now, seconds, inst_second)
                for rid, second in seconds.items():
                    _merge(vol_minutes[rid], second)
                _merge(inst_minute, inst_second)
        elif not self._steady(vol_minutes, inst_minute):
            for _ in range(60):
                self._second(float(self.elapsed_s), vol_minutes, inst_minute)
                self.elapsed_s += 1
        stamp = self.now - timedelta(seconds=60)
        out: Datapoints = {}
        for sim in inst.volumes:
            _emit_volume(out, sim, vol_minutes[sim.volume.volume_id], stamp)
        _emit_instance(out, inst, inst_minute, stamp)
        return out

    def _steady(self, vol_minutes: dict[str, _Minute], inst_minute: _Minute) -> bool:
        """A minute in which nothing changes but the credits, by the same amount each second:
        its first second simulated, the other 59 added at once, to the same result as 59 more
        seconds. False (and nothing done) where the demand or the size changes within the
        minute, or a bucket would reach empty or full: then every second is simulated."""
        inst = self.instance
        begin = float(self.elapsed_s)
        for sim in inst.volumes:
            if any(begin <= when < begin + 60 for when, _ in sim.resizes):
                return False
            if any(start < begin + 60 and begin < end for start, end in sim.stalls):
                return False
            if sim.demand.held(begin, 60):
                continue
            first = sim.demand.iops(begin)
            if any(sim.demand.iops(begin + k) != first for k in range(1, 60)):
                return False
        buckets = [(sim, sim.bucket) for sim in inst.volumes if sim.bucket is not None]
        before = [sim.credits for sim, _ in buckets]
        io_before, byte_before = inst.io_credits, inst.byte_credits
        accumulated = [_fields(vol_minutes[s.volume.volume_id]) for s in inst.volumes]
        inst_accumulated = _fields(inst_minute)
        # Only the first second's credits tell whether the rest is steady: simulate it on
        # copies of the accumulators, and undo it below if it is not.
        trial = {rid: _Minute(**vars(m)) for rid, m in vol_minutes.items()}
        inst_trial = _Minute(**vars(inst_minute))
        self._second(begin, trial, inst_trial)
        steps = [
            (sim.credits - was, bucket.capacity, was)
            for (sim, bucket), was in zip(buckets, before, strict=True)
        ]
        envelope = inst.envelope
        spans = (
            (
                envelope.iops - envelope.baseline_iops,
                envelope.throughput_bps - envelope.baseline_throughput_bps,
            )
            if envelope is not None
            else (0.0, 0.0)
        )
        inst_steps = [
            (inst.io_credits - io_before, spans[0] * INSTANCE_BURST_S, io_before),
            (inst.byte_credits - byte_before, spans[1] * INSTANCE_BURST_S, byte_before),
        ]
        if not all(_linear(step, cap, was) for step, cap, was in [*steps, *inst_steps]):
            for (sim, _), was in zip(buckets, before, strict=True):
                sim.credits = was
            inst.io_credits, inst.byte_credits = io_before, byte_before
            return False
        for sim, fields_before in zip(inst.volumes, accumulated, strict=True):
            into = vol_minutes[sim.volume.volume_id]
            _repeat(into, trial[sim.volume.volume_id], fields_before)
        _repeat(inst_minute, inst_trial, inst_accumulated)
        # The balances: the mean over the minute of a line through its 60 seconds.
        for (sim, _), (step, cap, was) in zip(buckets, steps, strict=True):
            vol_minutes[sim.volume.volume_id].balance = 100.0 * _ramp(was, step) / cap
            sim.credits = was + 60 * step
        if envelope is not None:
            (io_step, _, io_was), (byte_step, _, byte_was) = inst_steps
            inst_minute.balance = _percent(_ramp(io_was, io_step) / 60, spans[0]) * 60
            inst_minute.balance2 = _percent(_ramp(byte_was, byte_step) / 60, spans[1]) * 60
            inst.io_credits = io_was + 60 * io_step
            inst.byte_credits = byte_was + 60 * byte_step
        self.elapsed_s += 60
        return True

    def _second(self, t: float, vol_minutes: dict[str, _Minute], inst_minute: _Minute) -> None:
        """One second: each volume serves what it can, the instance scales the sum down to
        its EBS limits, and every bucket fills or drains by what was served."""
        inst = self.instance
        self._resize(t)
        reaching = _instance_share(inst.envelope, inst, t)
        tentative = [_served(s, t, reaching) for s in inst.volumes]
        total_iops = sum(iops for iops, *_ in tentative)
        total_bps = sum(iops * size for iops, size, *_ in tentative)
        scale = _instance_second(inst, total_iops, total_bps, inst_minute)
        for sim, (iops, size, demand, iops_hit, bps_hit) in zip(
            inst.volumes, tentative, strict=True
        ):
            served = iops * scale
            acc = vol_minutes[sim.volume.volume_id]
            _account(acc, sim, served, size, demand)
            _account(inst_minute, sim, served, size, demand)
            if sim.stalled(t):
                for minute in (acc, inst_minute):
                    # Submitted, not completed: not idle, and the queue stays.
                    minute.idle_s -= 1
                    minute.queue += STALLED_QUEUE
                    minute.stalled = 1.0
            acc.iops_exceeded = max(acc.iops_exceeded, float(iops_hit))
            acc.throughput_exceeded = max(acc.throughput_exceeded, float(bps_hit))
            bucket = sim.bucket
            if bucket is not None:
                spent = served * _charge_per_op(bucket, sim.envelope, sim.demand)
                sim.credits = _refill(sim.credits, bucket.baseline, spent, bucket.capacity)
                acc.balance += 100.0 * sim.credits / bucket.capacity

    def volume(self, volume_id: str) -> SimVolume | None:
        return next((v for v in self.instance.volumes if v.volume.volume_id == volume_id), None)

    @property
    def attachments(self) -> dict[str, str]:
        """Each simulated volume's instance."""
        return {v.volume.volume_id: self.instance.instance_id for v in self.instance.volumes}

    def run(self, minutes: int) -> Datapoints:
        """Several minutes; instance sums are folded into 5-minute points under basic
        monitoring, as CloudWatch would publish them."""
        out: Datapoints = {}
        for _ in range(minutes):
            for key, points in self.minute().items():
                out.setdefault(key, []).extend(points)
        if not self.instance.detailed_monitoring:
            for key in [k for k in out if k[0] == self.instance.instance_id]:
                if not metrics.named(Namespace.EC2, key[1]).period_s:
                    out[key] = fold(out[key], 300, statistic(*key))
        return out


def _instance_second(inst: SimInstance, total_iops: float, total_bps: float, acc: _Minute) -> float:
    """The share of what the volumes would serve that the instance's EBS limits let through
    this second; its EBS buckets fill or drain by what passes."""
    envelope = inst.envelope
    if envelope is None:
        return 1.0
    iops_cap = envelope.iops_limit(inst.io_credits > 0)
    bps_cap = envelope.throughput_limit(inst.byte_credits > 0)
    scale = 1.0
    if total_iops > iops_cap:
        scale = min(scale, iops_cap / total_iops)
    if total_bps > bps_cap:
        scale = min(scale, bps_cap / total_bps)
    io_span = envelope.iops - envelope.baseline_iops
    byte_span = envelope.throughput_bps - envelope.baseline_throughput_bps
    inst.io_credits = _refill(
        inst.io_credits, envelope.baseline_iops, total_iops * scale, io_span * INSTANCE_BURST_S
    )
    inst.byte_credits = _refill(
        inst.byte_credits,
        envelope.baseline_throughput_bps,
        total_bps * scale,
        byte_span * INSTANCE_BURST_S,
    )
    acc.balance += _percent(inst.io_credits, io_span)
    acc.balance2 += _percent(inst.byte_credits, byte_span)
    # Exceeded only by what the volumes would accept: a volume cap holds the rest.
    acc.iops_exceeded = max(acc.iops_exceeded, float(total_iops > iops_cap * 1.0001))
    acc.throughput_exceeded = max(acc.throughput_exceeded, float(total_bps > bps_cap * 1.0001))
    return scale


def _fields(minute: _Minute) -> dict[str, float]:
    return dict(vars(minute))


SUMMED = (
    "read_ops",
    "write_ops",
    "read_bytes",
    "write_bytes",
    "read_time",
    "write_time",
    "idle_s",
    "queue",
)


def _repeat(into: _Minute, first: _Minute, before: dict[str, float]) -> None:
    """`into` as if the first second of `first` (what it added to `before`) came 60 times."""
    for name in SUMMED:
        setattr(into, name, before[name] + 60 * (getattr(first, name) - before[name]))
    into.iops_exceeded = first.iops_exceeded
    into.throughput_exceeded = first.throughput_exceeded


def _linear(step: float, capacity: float, was: float) -> bool:
    """Whether a bucket that changed by `step` in one second changes by as much in each of 60:
    it neither empties nor fills meanwhile (or stays at either end, unchanged)."""
    if step == 0:
        return True
    last = was + 60 * step
    return was > 0 and last > 0 and was <= capacity and last < capacity and was + step < capacity


def _ramp(was: float, step: float) -> float:
    """The sum over seconds 1 to 60 of a bucket at `was` changing by `step` a second."""
    return 60 * was + step * 1830


def _refill(credits: float, earn: float, spend: float, capacity: float) -> float:
    return min(max(credits + earn - spend, 0.0), capacity)


def _percent(credits: float, per_second_span: float) -> float:
    if per_second_span <= 0:
        return 100.0
    return 100.0 * credits / (per_second_span * INSTANCE_BURST_S)


Second = _Minute
"""What one second did: the same accumulators, over one second."""
_HIGHEST = frozenset({"stalled", "iops_exceeded", "throughput_exceeded"})


def _merge(into: _Minute, second: _Minute) -> None:
    """A second added to its minute: sums, but the highest of the checks."""
    for name, value in vars(second).items():
        mine = getattr(into, name)
        setattr(into, name, max(mine, value) if name in _HIGHEST else mine + value)


def _account(acc: _Minute, sim: SimVolume, served: float, size: float, demand: float) -> None:
    reads = served * sim.demand.read_fraction
    writes = served - reads
    service = (
        HDD_SERVICE_S if sim.volume.volume_type in ("st1", "sc1", "standard") else SSD_SERVICE_S
    )
    # Throttled I/O waits in the queue: latency grows with how far demand exceeds service.
    latency = service * (min(demand / served, 50.0) if served > 0 and demand > served else 1.0)
    acc.read_ops += reads
    acc.write_ops += writes
    acc.read_bytes += reads * size
    acc.write_bytes += writes * size
    acc.read_time += reads * latency
    acc.write_time += writes * latency
    acc.queue += served * latency
    if served <= 0:
        acc.idle_s += 1


def _emit_volume(out: Datapoints, sim: SimVolume, acc: _Minute, stamp: datetime) -> None:
    values: dict[Measure | Part, float] = {
        Part.READ_OPS: acc.read_ops,
        Part.WRITE_OPS: acc.write_ops,
        Part.READ_BYTES: acc.read_bytes,
        Part.WRITE_BYTES: acc.write_bytes,
        Part.READ_TIME: acc.read_time,
        Part.WRITE_TIME: acc.write_time,
        Part.IDLE_TIME: acc.idle_s,
        Measure.QUEUE_LENGTH: acc.queue / 60,
    }
    nitro = sim.instance_type is not None and sim.instance_type.nitro
    if nitro:
        values[Measure.STALLED_IO] = acc.stalled
    if nitro and sim.volume.volume_type != "standard":
        # "Supported for all volume types, except magnetic (standard), attached to Nitro
        # instances" (AWS Compute Optimizer User Guide, EBS volume metrics; the EBS User Guide
        # says the same).
        values[Measure.IOPS_EXCEEDED] = acc.iops_exceeded
        values[Measure.THROUGHPUT_EXCEEDED] = acc.throughput_exceeded
    if sim.bucket is not None and acc.idle_s < 60:  # a bucket: BurstBalance (`has_burst_balance`)
        # "Data is reported only when the volume is active" (Amazon EBS User Guide, Amazon
        # CloudWatch metrics for Amazon EBS, BurstBalance): a minute without I/O has none.
        values[Measure.BURST_BALANCE] = acc.balance / 60
    emit(out, sim.volume.volume_id, values, stamp)


def _emit_instance(out: Datapoints, inst: SimInstance, acc: _Minute, stamp: datetime) -> None:
    values: dict[Measure | Part, float] = {
        Part.READ_OPS: acc.read_ops,
        Part.WRITE_OPS: acc.write_ops,
        Part.READ_BYTES: acc.read_bytes,
        Part.WRITE_BYTES: acc.write_bytes,
    }
    if inst.type_info.nitro:
        # Attached-EBS status checks (Amazon EC2 User Guide, "Status checks"): Nitro only.
        values[Measure.ATTACHED_EBS_FAILED] = acc.stalled
        if not inst.type_info.bare_metal:  # no instance EBS exceeded checks on bare metal
            values[Measure.IOPS_EXCEEDED] = acc.iops_exceeded
            values[Measure.THROUGHPUT_EXCEEDED] = acc.throughput_exceeded
    if inst.type_info.ebs_bursts:
        values[Measure.IO_BALANCE] = acc.balance / 60
        values[Measure.BYTE_BALANCE] = acc.balance2 / 60
    emit(out, inst.instance_id, values, stamp)
