"""The inventory ends alerts: a volume detached, deleted or moved to another instance, an
instance stopped. Its alerts resolve at once with what happened, never with a cap or credit
reason, and are not posted again: AWS publishes no metrics for a detached volume, so waiting
for data to show the condition gone would keep it firing for as long as it stays detached."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from analyzer import settings
from analyzer.analyze import rules
from analyzer.analyze.alerts import AlertBook, AlertState
from analyzer.live.cycle import Analyzer
from analyzer.sim.workloads import Demand, constant
from tests.account import Account

START = datetime(2026, 11, 21, 6, 0, tzinfo=UTC)


def firing_cap(account: Account):
    """A gp3 volume held at its 3,000 IOPS cap on an m5.large: its cap alert fires."""
    instance = account.instance("m5.large", detailed=True)
    volume = account.volume("gp3", 200, instance)
    sim = account.simulation(instance, {volume: Demand(constant(3_500))}, START, detailed=True)
    account.put(sim.run(40))
    analyzer = Analyzer(settings.load({"region": [account.region]}), rules.load())
    book = AlertBook(repeat_s=3_600, resolve_after_s=300)
    now = START + timedelta(minutes=40, seconds=130)
    result = analyzer.run(now)
    book.update(now, result.findings, result.pending, unknown=result.unknown)
    [alert] = book.firing()
    assert alert.rule == "volume-iops-cap"
    book.delivered([alert], now)
    return analyzer, book, instance, volume, now


def next_cycle(analyzer, book, now):
    later = now + timedelta(minutes=1)
    analyzer.refresh_inventory()
    result = analyzer.run(later)
    book.update(later, result.findings, result.pending, unknown=result.unknown)
    return later


@pytest.mark.parametrize("change", ["detached", "deleted", "moved"])
def test_a_volume_the_inventory_changed_resolves_saying_what_happened(aws, change):
    account = Account()
    analyzer, book, instance, volume, now = firing_cap(account)
    account.ec2.detach_volume(VolumeId=volume, InstanceId=instance, Device="/dev/sdf")
    if change == "deleted":
        account.ec2.delete_volume(VolumeId=volume)
    other = None
    if change == "moved":
        other = account.instance("m5.large")
        account.ec2.attach_volume(VolumeId=volume, InstanceId=other, Device="/dev/sdg")
    later = next_cycle(analyzer, book, now)
    [alert] = book.owed()
    assert alert.state is AlertState.RESOLVED
    said = alert.cleared(later)
    expected = {
        "detached": f"{volume} was detached from {instance}",
        "deleted": f"{volume} is gone from the inventory (deleted)",
        "moved": f"{volume} was moved from {instance} to {other}",
    }[change]
    assert said.startswith(expected + "; resolved")
    assert "cap" not in said and "credits" not in said
    book.delivered([alert], later)
    next_cycle(analyzer, book, later)
    if change != "moved":  # a moved volume's alerts start afresh, on its new instance
        assert book.owed() == [] and book.firing() == []  # not posted again


def test_an_alert_stays_unknown_where_the_inventory_says_nothing(aws):
    """A region whose inventory this cycle does not hold says nothing of what left it."""
    from analyzer.analyze.analysis import Unjudged
    from analyzer.model.state import Snapshot

    nothing = Unjudged(Snapshot(START, START, ()))
    assert nothing.ended("us-east-1", "vol-1", "i-1") is None


def test_an_instance_stopped_while_its_alert_fires_resolves_saying_so(aws):
    from analyzer.analyze.analysis import Unjudged
    from analyzer.model.findings import Bottleneck, Finding, Severity
    from analyzer.model.resources import Instance, ResourceRef, ResourceType
    from analyzer.model.series import Status
    from analyzer.model.state import ResourceState, Snapshot
    from analyzer.model.units import Unit

    ref = ResourceRef(ResourceType.INSTANCE, "i-1", "us-east-1")
    finding = Finding(
        "instance-iops-cap", Severity.WARNING, ref, Bottleneck.INSTANCE_IOPS, "pinned",
        observed=3_600, limit=3_600, unit=Unit.IOPS,
    )  # fmt: skip
    book = AlertBook(repeat_s=3_600, resolve_after_s=300)
    book.update(START, [finding], [])
    [alert] = book.firing()
    book.delivered([alert], START)
    stopped = Instance("i-1", "us-east-1", "m5.large", "stopped")
    state = ResourceState(ref, stopped, None, {}, Status.NO_DATA)
    later = START + timedelta(minutes=1)
    book.update(later, [], [], unknown=Unjudged(Snapshot(later, later, (state,))))
    [resolved] = book.owed()
    assert resolved.cleared(later).startswith("i-1 is stopped; resolved")


def test_an_alert_a_node_agent_takes_over_resolves_saying_so_and_is_not_repeated(aws):
    """Once a node agent reads the volume's rates (Prometheus says so), the node alerts on
    them: this daemon resolves its own alert at once, rather than holding it (and repeating
    it) beside the node's."""
    from analyzer.collect.coverage import NodeCoverage
    from tests.prometheus_endpoint import vector

    account = Account()
    analyzer, book, _, volume, now = firing_cap(account)
    analyzer.coverage.prometheus = NodeCoverage(
        "http://prometheus:9090", get=lambda *_: (200, vector(volume))
    )
    later = next_cycle(analyzer, book, now)
    [alert] = book.owed()
    assert alert.state is AlertState.RESOLVED
    said = alert.cleared(later)
    assert said.startswith(f"{volume}: its rates are read by a node agent now, which alerts on")
    book.delivered([alert], later)
    next_cycle(analyzer, book, later)
    assert book.owed() == [] and book.firing() == []


def test_a_modification_made_in_the_console_resolves_the_alert_on_the_old_cap(aws):
    """A gp3 volume held at its 3,000 IOPS, raised to 6,000 behind the daemon's back (a
    ModifyVolume from the console): the cycle after the inventory shows it, its cap alert
    resolves saying what changed, and the minutes it was held at the old cap raise nothing
    on the new one, then or after."""
    account = Account()
    instance = account.instance("m5.large", detailed=True)
    volume = account.volume("gp3", 200, instance)
    sim = account.simulation(instance, {volume: Demand(constant(3_500))}, START, detailed=True)
    account.put(sim.run(40))
    analyzer = Analyzer(settings.load({"region": [account.region]}), rules.load())
    book = AlertBook(repeat_s=3_600, resolve_after_s=300)
    now = START + timedelta(minutes=40, seconds=130)
    result = analyzer.run(now)
    book.update(now, result.findings, result.pending, unknown=result.unknown)
    [alert] = book.firing()
    assert alert.rule == "volume-iops-cap" and alert.finding.limit == 3_000
    book.delivered([alert], now)

    changed = START + timedelta(minutes=40)
    account.modify_volume(volume, changed, Iops=6_000)
    [simulated] = sim.instance.volumes
    simulated.modify(iops=6_000)
    account.put(sim.run(10))  # the 3,500 IOPS asked now pass

    later = next_cycle(analyzer, book, now)
    [resolved] = book.owed()
    assert resolved.state is AlertState.RESOLVED
    said = resolved.cleared(later)
    assert said.startswith(
        f"{volume} was modified gp3 200 GiB 3,000 IOPS → gp3 200 GiB 6,000 IOPS at 06:40 UTC "
        "(completed), in effect: the configuration this alert was about is gone"
    )
    book.delivered([resolved], later)
    assert book.firing() == [] and not book.alerts
    for minutes in (45, 52):
        at = START + timedelta(minutes=minutes, seconds=10)
        result = analyzer.run(at)
        book.update(at, result.findings, result.pending, unknown=result.unknown)
        assert [
            f for f in (*result.findings, *result.pending) if f.resource.resource_id == volume
        ] == []
        assert book.owed() == [] and not book.alerts
