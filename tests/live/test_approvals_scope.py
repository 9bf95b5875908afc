"""What a click or the policy may reach, against stand-in regions that answer as AWS does: the
resource of the alert that offered the fix, in its own account and region, as read afresh;
nothing once the daemon stops. Each refusal leaves every region's resources uncalled."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import pytest

from analyzer.act.apply import Applier, Outcome
from analyzer.act.guards import Policy
from analyzer.act.ledger import Ledger
from analyzer.analyze import prices
from analyzer.analyze.alerts import Alert, AlertState
from analyzer.analyze.catalog import Catalog
from analyzer.collect.changes import Answered
from analyzer.deliver.interactions import Click
from analyzer.errors import AwsCallError
from analyzer.live.approvals import Approvals
from analyzer.model.findings import (
    Bottleneck,
    Change,
    Finding,
    PastFit,
    Remedy,
    RemedyKind,
    Severity,
)
from analyzer.model.resources import (
    DbInstance,
    Inventory,
    Modification,
    ResourceRef,
    ResourceType,
    Volume,
)
from analyzer.model.units import Unit

NOW = datetime(2026, 11, 28, 12, tzinfo=UTC)
TAG = {"ebs-analyzer/apply": "allowed"}
POLICY = Policy("ebs-analyzer/apply=allowed")
GP3 = "type=gp3,iops=3000,throughput=125"


class Place:
    """One account's region: its resources by id, the calls that change them, and reads that
    fail as AWS throttling does where `fails`. ModifyVolume starts a modification as EC2
    reports it (`modifying`, its target fields)."""

    def __init__(
        self,
        where: str,
        volumes: tuple[Volume, ...] = (),
        dbs: tuple[DbInstance, ...] = (),
        fails: bool = False,
    ) -> None:
        self.where, self.fails = where, fails
        self.volumes = {v.volume_id: v for v in volumes}
        self.dbs = {d.db_instance_id: d for d in dbs}
        self.calls: list[tuple[Any, ...]] = []

    def _read(self, what: str) -> None:
        if self.fails:
            raise AwsCallError(f"{what} in {self.where}: Throttling: Rate exceeded", "Throttling")

    def volume(self, volume_id: str) -> Volume | None:
        self._read("ec2:DescribeVolumes")
        return self.volumes.get(volume_id)

    def db_instance(self, db_instance_id: str) -> DbInstance | None:
        self._read("rds:DescribeDBInstances")
        return self.dbs.get(db_instance_id)

    def modify_volume(self, volume_id: str, target: Any, dry_run: bool) -> Answered:
        self.calls.append(("ModifyVolume", volume_id, dict(target)))
        fields = ("volume_type", "size_gib", "iops", "throughput_mibps")
        mod = Modification(
            "modifying", NOW, target_fields=tuple((k, target[k]) for k in fields if k in target)
        )
        found = self.volumes[volume_id]
        self.volumes[volume_id] = replace(found, modifications=(mod, *found.modifications))
        return Answered(mod)

    def modify_db_storage(self, db_instance_id: str, target: Any) -> Answered:
        self.calls.append(("ModifyDBInstance", db_instance_id, dict(target)))
        return Answered()


def _alert(resource_id: str, where: str, offered: tuple[str, ...], remedies=()) -> Alert:
    account, _, region = where.rpartition("/")
    kind = ResourceType.VOLUME if resource_id.startswith("vol-") else ResourceType.DB_INSTANCE
    finding = Finding(
        "gp2-burst-exhaustion",
        Severity.WARNING,
        ResourceRef(kind, resource_id, region, account),
        Bottleneck.BURST_CREDITS,
        f"{resource_id} drains",
        1500.0,
        150.0,
        Unit.IOPS,
        remedies=tuple(remedies),
    )
    return Alert(finding, AlertState.FIRING, NOW, firing_since=NOW, offered=offered)


def _approvals(places: list[Place], firing: list[Alert], **more: Any) -> Approvals:
    said: list[str] = []

    def applier() -> Applier:
        return Applier(
            [(p.where, p) for p in places],
            Catalog(prices.load()),
            POLICY,
            lambda: NOW,
            sleep=lambda s: None,
        )

    inventories = {
        p.where: Inventory(
            p.where.rpartition("/")[2],
            volumes=tuple(p.volumes.values()),
            db_instances=tuple(p.dbs.values()),
        )
        for p in places
    }
    made = Approvals(
        applier,
        frozenset({"U1"}),
        Ledger(),
        POLICY,
        lambda: inventories,
        lambda url, message: said.append(message["text"]),
        lambda via, outcome: None,
        lambda: None,
        lambda: NOW,
        wait_s=0.0,
        firing=lambda: firing,
        **more,
    )
    made.said = said  # type: ignore[attr-defined]
    return made


def _click(fix_id: str) -> Click:
    return Click("U1", fix_id, "https://hooks.slack.com/actions/T/1/x")


def _db(where: str) -> DbInstance:
    return DbInstance(
        "orders", where.rpartition("/")[2], "mysql", "db.m5.large", "gp2", 200, "available",
        tags=TAG,
    )  # fmt: skip


@pytest.mark.parametrize("first_fails", [True, False], ids=["unreadable", "gone"])
def test_a_click_applies_in_its_alerts_account_never_to_a_namesake(first_fails) -> None:
    """An RDS id is unique in one account and region only: the alert's `orders` in 111 is
    throttled (or gone), and 222's `orders`, tagged too, is not touched."""
    prod = Place("111111111111/us-east-1", dbs=(_db("us-east-1"),) if first_fails else (),
                 fails=first_fails)  # fmt: skip
    other = Place("222222222222/us-east-1", dbs=(_db("us-east-1"),))
    fix = "orders:type=gp2,size=300"
    approvals = _approvals([prod, other], [_alert("orders", prod.where, (fix,))])
    approvals.click(_click(fix))
    assert prod.calls == [] and other.calls == []
    [said] = approvals.said  # type: ignore[attr-defined]
    assert "111111111111/us-east-1" in said and "222222222222" not in said


def test_an_offer_counts_only_for_its_own_alerts_resource() -> None:
    a = Volume("vol-a", "us-east-1", "gp2", 50, "in-use", tags=TAG)
    b = Volume("vol-b", "us-east-1", "gp2", 50, "in-use", tags=TAG)
    place = Place("us-east-1", volumes=(a, b))
    # An alert about vol-a whose offers (a hand-edited state file, say) name vol-b.
    approvals = _approvals([place], [_alert("vol-a", "us-east-1", (f"vol-b:{GP3}",))])
    approvals.click(_click(f"vol-b:{GP3}"))
    assert place.calls == []
    assert "no alert firing now carries an Apply button" in approvals.said[0]  # type: ignore[attr-defined]


def _gp2_remedy(resource_id: str) -> Remedy:
    change = Change(
        ResourceType.VOLUME,
        resource_id,
        {"volume_type": "gp2", "size_gib": 500},
        {"volume_type": "gp3", "size_gib": 500, "iops": 3000, "throughput_mibps": 125},
    )
    return Remedy(
        "Move to gp3",
        change=change,
        kind=RemedyKind.MODIFY,
        monthly_delta=-10.0,
        past=PastFit(days=14, minutes_limited=0),
    )


def test_the_policy_reads_the_volume_afresh_and_leaves_one_moved_since_alone() -> None:
    """The cycle saw gp2; an operator has since moved it to io2 at 16,000 IOPS."""
    moved = Volume("vol-1", "us-east-1", "io2", 500, "in-use", iops=16_000, tags=TAG)
    place = Place("us-east-1", volumes=(moved,))
    alert = _alert("vol-1", "us-east-1", (), [_gp2_remedy("vol-1")])
    approvals = _approvals([place], [alert], automatic=frozenset({"gp2-to-gp3"}))
    approvals.inventories = lambda: {  # type: ignore[method-assign]
        "us-east-1": Inventory("us-east-1", volumes=(replace(moved, volume_type="gp2", iops=1500),))
    }
    [result] = approvals.apply_automatically([alert])
    assert result.outcome is Outcome.REFUSED and "is io2 now, not gp2" in result.reason
    assert place.calls == []


def test_once_the_daemon_stops_no_click_and_no_policy_asks_aws() -> None:
    volume = Volume("vol-1", "us-east-1", "gp2", 500, "in-use", tags=TAG)
    place = Place("us-east-1", volumes=(volume,))
    alert = _alert("vol-1", "us-east-1", (f"vol-1:{GP3}",), [_gp2_remedy("vol-1")])
    approvals = _approvals([place], [alert], automatic=frozenset({"gp2-to-gp3"}))
    assert approvals.finish(1.0)
    approvals.click(_click(f"vol-1:{GP3}"))
    assert approvals.apply_automatically([alert]) == []
    assert place.calls == []
    assert "the daemon is stopping: nothing changed" in approvals.said[0]  # type: ignore[attr-defined]


def test_applying_without_a_state_file_is_refused_at_start(tmp_path) -> None:
    from analyzer import settings
    from analyzer.errors import ConfigError
    from analyzer.live.approvals import approvals_for

    config = settings.load(
        {"region": ["us-east-1"], "apply_automatically": ["gp2-to-gp3"], "state_file": None}
    )
    with pytest.raises(ConfigError, match=r"^apply_automatically: applying fixes needs state_file"):
        approvals_for(config, None, Ledger(), lambda *a: None, lambda: None, lambda: NOW,
                      Catalog(prices.load()), lambda lines: None)  # type: ignore[arg-type]  # fmt: skip
