"""A CloudWatch outage, replayed through moto: data that is missing is not "the condition is
gone". With default settings a 6.5-minute outage used to resolve both firing alerts at
5 min 20 s and fire them again after it."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from structlog.testing import capture_logs

from analyzer import settings
from analyzer.analyze import rules
from analyzer.analyze.alerts import AlertBook, AlertState, Owed
from analyzer.collect.aws import Clients
from analyzer.collect.regions import connect
from analyzer.live.cycle import Analyzer
from analyzer.sim.workloads import Demand, constant
from tests.account import Account
from tests.fakes import Interruptible, internal_failure

START = datetime(2026, 11, 21, 6, 0, tzinfo=UTC)


def watching(
    account: Account, cloudwatch: Interruptible | None = None
) -> tuple[AlertBook, Callable[[float], None]]:
    """An alert book, and a cycle of the analyzer into it at a minute of the replay (reading
    metrics through `cloudwatch`, where given)."""
    config = settings.load({"region": [account.region]})
    if cloudwatch is None:
        analyzer = Analyzer(config, rules.load())
    else:
        analyzer = Analyzer(
            config,
            rules.load(),
            connect=lambda name: connect(name, Clients.for_region(name, cloudwatch=cloudwatch)),
        )
    book = AlertBook(repeat_s=4 * 3600, resolve_after_s=300)

    def cycle(minute: float) -> None:
        now = START + timedelta(minutes=minute, seconds=130)
        result = analyzer.run(now)
        book.update(now, result.findings, result.pending, result.unknown, result.reading)

    return book, cycle


def test_a_cloudwatch_outage_neither_resolves_nor_refires_an_alert(aws: None) -> None:
    account = Account()
    instance = account.instance("m5.large")
    volume = account.volume("gp3", 200, instance)  # 3,000 IOPS
    account.put(account.simulation(instance, {volume: Demand(constant(5_000))}, START).run(60))
    cloudwatch = Interruptible(account.clients.cloudwatch)
    book, cycle = watching(account, cloudwatch)

    cycle(30)
    [alert] = [a for a in book if a.resource_id == volume]
    assert alert.state is AlertState.FIRING
    book.delivered(book.owed(), START)

    cloudwatch.fault = internal_failure
    with capture_logs() as logs:
        for minute in range(31, 38):  # 6.5 minutes of failed calls, one cycle a minute
            cycle(minute)
    assert alert.state is AlertState.FIRING
    assert book.owed() == []
    [said] = [e for e in logs if e["event"] == "alert.unknown"]
    assert said["resource"] == volume

    cloudwatch.fault = None
    cycle(38)
    assert alert.state is AlertState.FIRING
    assert alert.outbox is None  # no second "Firing"
    assert book.owed() == []
    assert Owed.RESOLVED not in {a.outbox for a in book}


def test_data_that_stops_arriving_holds_an_alert_until_data_shows_it_gone(aws: None) -> None:
    """Data 5 minutes late is not a clear volume: the alert holds; once data shows the load
    gone for `resolve_after`, it resolves."""
    account = Account()
    instance = account.instance("m5.large")
    volume = account.volume("gp3", 200, instance)
    simulation = account.simulation(instance, {volume: Demand(constant(5_000))}, START)
    data = simulation.run(32)
    account.put(data)
    book, cycle = watching(account)

    cycle(30)
    [alert] = [a for a in book if a.resource_id == volume]
    book.delivered(book.owed(), START)
    for minute in range(31, 40):  # nothing newer than minute 32 arrives
        cycle(minute)
        assert alert.state is AlertState.FIRING, f"minute {minute}"
    # The late data arrives: the load had stopped at minute 32.
    quiet = account.simulation(instance, {volume: Demand(constant(0))}, START)
    later = quiet.run(60)
    account.put(
        {
            k: [(t, v) for t, v in pts if t >= START + timedelta(minutes=32)]
            for k, pts in later.items()
        }
    )
    for minute in range(40, 48):
        cycle(minute)
    assert alert.state is AlertState.RESOLVED


def test_a_volume_left_out_of_the_answers_is_stale_not_current(aws: None) -> None:
    """Its last values are not exported as current: status stale, its age, no rates."""
    from analyzer.deliver.exporter import Published
    from analyzer.deliver.rows import resource_row

    account = Account()
    instance = account.instance("m5.large")
    volume = account.volume("gp3", 200, instance)
    other = account.volume("gp3", 200, instance, device="/dev/sdg")
    data = account.simulation(
        instance, {volume: Demand(constant(3_000)), other: Demand(constant(100))}, START
    ).run(45)
    cut = START + timedelta(minutes=37)  # the volume is left out from here on
    account.put(
        {k: [(t, v) for t, v in pts if k[0] != volume or t < cut] for k, pts in data.items()}
    )
    analyzer = Analyzer(settings.load({"region": [account.region]}), rules.load())
    analyzer.run(START + timedelta(minutes=36, seconds=130))
    result = analyzer.run(START + timedelta(minutes=42, seconds=130))
    rows = {r.ref.resource_id: resource_row(r) for r in result.readings}
    assert rows[other]["status"] == "ok"
    assert rows[volume]["status"] == "stale"
    assert rows[volume]["iops"] is None and rows[volume]["iops_limit"] == 3_000
    # Its last minute ends 06:37; the data end is the newest minute published, 06:44.
    assert rows[volume]["data_age_seconds"] == 420
    lines = Published.of(result.readings, []).exposition.text().decode().splitlines()
    mine = [line for line in lines if f'volume_id="{volume}"' in line]
    [up] = [line for line in mine if line.startswith("ebs_analyzer_volume_up{")]
    assert 'status="stale"' in up and up.endswith(" 0.0")
    assert not [line for line in mine if line.startswith("ebs_analyzer_volume_iops{")]
    assert [line for line in mine if line.startswith("ebs_analyzer_volume_data_age_seconds{")]


def test_a_clock_ahead_says_stale_and_gives_no_verdict(aws: None) -> None:
    """With the host clock 30 minutes ahead, the newest data is half an hour old: stale rows
    and no verdict, not old values called current (2 hours ahead, beyond the hour of
    lookback, there is no data at all: no_data, no verdict either)."""
    from analyzer.deliver.report import render

    account = Account()
    instance = account.instance("m5.large")
    volume = account.volume("gp3", 200, instance)
    account.put(account.simulation(instance, {volume: Demand(constant(5_000))}, START).run(40))
    for ahead in (timedelta(minutes=30), timedelta(hours=2)):
        analyzer = Analyzer(settings.load({"region": [account.region]}), rules.load())
        result = analyzer.run(START + timedelta(minutes=40, seconds=130) + ahead)
        assert result.findings == []
        text = render(result.snapshot, result.readings, result.findings, "text", None)
        assert "No findings" not in text and "No verdict" in text
    analyzer = Analyzer(settings.load({"region": [account.region]}), rules.load())
    result = analyzer.run(START + timedelta(minutes=70, seconds=130))
    assert "had only stale data" in render(
        result.snapshot, result.readings, result.findings, "text", None
    )
