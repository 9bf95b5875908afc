"""The daemon's savings over a moto account, day after day on a test clock: each volume's
long past read a stretch a day (never more metrics a day than one full read of it), the cut
on /metrics once it is read whole, kept across a restart without a read, never paging, and
posted weekly in Slack where a webhook is set."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from analyzer import settings
from analyzer.analyze import rules
from analyzer.collect import peaks, queries
from analyzer.deliver.exporter import Published
from analyzer.live import daemon
from tests.account import Account
from tests.receiver import Receiver

NOW = datetime.now(UTC).replace(second=0, microsecond=0)
ALLOWED = {"ResourceType": "volume", "Tags": [{"Key": "ebs-analyzer/apply", "Value": "allowed"}]}


class Clock:
    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


def _io2(account: Account) -> str:
    """io2 500 GiB at 20,000 IOPS on an m5.large: 100 IOPS of 16 KiB once an hour for 63
    days, and one minute at 3,000 IOPS four days ago."""
    instance = account.instance("m5.large")
    volume = account.volume("io2", 500, instance, Iops=20_000, TagSpecifications=[ALLOWED])
    reads = [(NOW - timedelta(hours=h), 100.0 * 60) for h in range(63 * 24, 0, -1)]
    reads.append(((NOW - timedelta(days=4.2)).replace(minute=(NOW.minute + 30) % 60), 3_000 * 60))
    reads.sort()
    account.put(
        {
            (volume, "VolumeReadOps"): reads,
            (volume, "VolumeWriteOps"): [(t, 0.0) for t, _ in reads],
            (volume, "VolumeReadBytes"): [(t, v * 16_384) for t, v in reads],
            (volume, "VolumeWriteBytes"): [(t, 0.0) for t, _ in reads],
        }
    )
    return volume


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> Counter[tuple[str, int]]:
    """The long-past metrics asked, by (volume, day of the test clock)."""
    asked: Counter[tuple[str, int]] = Counter()
    real = peaks.answers
    clock: list[Clock] = []

    def counting(metrics: Any, asked_for: list[Any], window: Any, stats: Any) -> Any:
        for q in asked_for:
            asked[(q.resource_id, (clock[0].now - NOW).days if clock else 0)] += 1
        return real(metrics, asked_for, window, stats)

    monkeypatch.setattr(peaks, "answers", counting)
    asked.clock = clock  # type: ignore[attr-defined]
    return asked


def _build(tmp_path: Path, clock: Clock, **more: Any) -> daemon.Daemon:
    config = settings.load(
        {
            "region": ["us-east-1"],
            "listen": "127.0.0.1:0",
            "state_file": str(tmp_path / "state.json"),
            **more,
        }
    )
    process, server = daemon.build(config, rules.load(), None, clock, process_metrics=False)
    server.stop()
    return process


def _days(process: daemon.Daemon, clock: Clock, days: int, cycles: int = 3) -> None:
    """`cycles` cycles a minute apart at the start of each of `days` days."""
    for _ in range(days):
        for _ in range(cycles):
            clock.now += timedelta(minutes=1)
            process.cycle()
        clock.now += timedelta(days=1) - timedelta(minutes=cycles)


def _metrics(process: daemon.Daemon) -> str:
    published = process.published()
    assert isinstance(published, Published)
    return published.exposition.text().decode()


@pytest.fixture
def world(aws: None, tmp_path: Path, counted: Counter[tuple[str, int]]) -> Iterator[dict[str, Any]]:
    account = Account()
    volume = _io2(account)
    clock = Clock(NOW + timedelta(minutes=2))
    counted.clock.append(clock)  # type: ignore[attr-defined]
    yield {"account": account, "volume": volume, "clock": clock, "tmp": tmp_path}


def test_the_cut_shows_once_its_past_is_read_whole_a_stretch_a_day(
    world: dict[str, Any], counted: Counter[tuple[str, int]]
) -> None:
    clock, volume = world["clock"], world["volume"]
    process = _build(world["tmp"], clock)
    _days(process, clock, 2)
    shown = process.weighed()
    assert shown is not None
    assert [s for s in shown[0] if s.resource_id == volume] == []  # the hour stretch to go
    assert shown[1]["reading"] == 2  # the io2, and its instance's root volume
    _days(process, clock, 1)
    found, counts = process.weighed()  # type: ignore[misc]
    [cut] = [s for s in found if s.resource_id == volume]
    assert cut.target is not None and cut.target["iops"] == 3_600
    assert cut.monthly_saving == pytest.approx((20_000 - 3_600) * 0.065, abs=0.01)
    assert counts == {"weighed": 2, "reading": 0, "unread": 0}
    text = _metrics(process)
    assert (
        f'ebs_analyzer_savings_monthly_dollars{{kind="iops_above_need",region="us-east-1",'
        f'resource_id="{volume}"}} 1066.0'
    ) in text
    assert "ebs_analyzer_savings_fleet_monthly_dollars 1066.0" in text
    assert 'ebs_analyzer_savings_volumes{state="weighed"} 2.0' in text
    # Savings never page: no alert in the book.
    assert not [a for a in process.book if "saving" in a.rule]


def test_a_volume_costs_at_most_one_full_reads_metrics_a_day(
    world: dict[str, Any], counted: Counter[tuple[str, int]]
) -> None:
    clock, volume = world["clock"], world["volume"]
    process = _build(world["tmp"], clock)
    _days(process, clock, 6, cycles=5)
    described = world["account"].described_volume(volume)
    one_read = len(queries.for_volume(described, nitro=True))
    per_day = {day: n for (rid, day), n in counted.items() if rid == volume}
    assert sorted(per_day) == [0, 1, 2, 3, 4, 5]  # a stretch every day, once
    assert max(per_day.values()) <= min(one_read, 5)
    assert sum(per_day.values()) == 4 + 5 + 5 + 4 + 5 + 5  # minute, 5-min, hour, then stalest


def test_a_restart_reads_nothing_again_and_shows_the_cut_at_once(
    world: dict[str, Any], counted: Counter[tuple[str, int]]
) -> None:
    clock, volume = world["clock"], world["volume"]
    _days(_build(world["tmp"], clock), clock, 3)
    kept = json.loads((world["tmp"] / "state.json.long-pasts").read_text())
    assert {r["volume_id"] for r in kept} >= {volume}
    before = sum(counted.values())
    clock.now -= timedelta(hours=20)  # the same day as the last reads
    again = _build(world["tmp"], clock)
    for _ in range(3):  # the first cycle reads none: the next ones would, were any due
        clock.now += timedelta(minutes=1)
        again.cycle()
    assert sum(counted.values()) == before
    found, _ = again.weighed()  # type: ignore[misc]
    assert [s.resource_id for s in found if s.resource_id == volume] == [volume]


def test_a_modification_sets_the_past_aside_and_the_cut_goes(world: dict[str, Any]) -> None:
    clock, volume = world["clock"], world["volume"]
    process = _build(world["tmp"], clock)
    _days(process, clock, 3)
    world["account"].modify_volume(volume, clock.now, Iops=3_600)
    process.refresh_inventory()
    clock.now += timedelta(minutes=1)
    process.cycle()
    found, counts = process.weighed()  # type: ignore[misc]
    assert [s for s in found if s.resource_id == volume] == []
    assert counts["reading"] == 1


def test_the_weekly_digest_is_posted_once_a_week_and_remembered(world: dict[str, Any]) -> None:
    clock, volume = world["clock"], world["volume"]
    receiver = Receiver().start()
    try:
        process = _build(world["tmp"], clock, slack_webhook_url=receiver.url)
        _days(process, clock, 4)
        digests = [m for m in receiver.requests if "Savings this week" in m["text"]]
        assert len(digests) == 1
        assert f"ebs-analyzer apply {volume}:iops=3600" in digests[0]["text"]
        assert "$1,066.00 a month" in digests[0]["text"]
        again = _build(world["tmp"], clock, slack_webhook_url=receiver.url)
        _days(again, clock, 2)
        assert len([m for m in receiver.requests if "Savings this week" in m["text"]]) == 1
        _days(again, clock, 4)  # a week after the first
        assert len([m for m in receiver.requests if "Savings this week" in m["text"]]) == 2
    finally:
        receiver.stop()


def test_no_digest_where_it_is_off(world: dict[str, Any]) -> None:
    clock = world["clock"]
    receiver = Receiver().start()
    try:
        process = _build(world["tmp"], clock, slack_webhook_url=receiver.url, savings_digest="off")
        _days(process, clock, 4)
        assert not [m for m in receiver.requests if "Savings" in m["text"]]
    finally:
        receiver.stop()


def test_a_digest_that_fails_fails_no_cycle(world: dict[str, Any]) -> None:
    clock = world["clock"]
    receiver = Receiver().start()
    try:
        process = _build(world["tmp"], clock, slack_webhook_url=receiver.url)

        def broken(*_: Any) -> None:
            raise RuntimeError("a bug")

        process.dispatcher.channel.send = broken  # type: ignore[method-assign]
        for _ in range(3):
            for _ in range(3):
                clock.now += timedelta(minutes=1)
                assert process.cycle()
            clock.now += timedelta(days=1) - timedelta(minutes=3)
        assert process.savings_digest_at is None
    finally:
        receiver.stop()
