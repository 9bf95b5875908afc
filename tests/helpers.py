"""Small builders shared by the tests."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from analyzer import settings
from analyzer.errors import ConfigError
from analyzer.model.series import Series, Status

T0 = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)


def minutes(n: float) -> timedelta:
    return timedelta(minutes=n)


def quiet_past(state, days: int = 14):
    """The state with a quiet fortnight behind each of its balances (full every day), as the
    daemon reads the past of a resource that has run for weeks: not a young bucket."""
    from dataclasses import replace

    from analyzer.model.metrics import Measure
    from analyzer.model.past import Past

    balances = (Measure.BURST_BALANCE, Measure.IO_BALANCE, Measure.BYTE_BALANCE)
    start = T0.replace(hour=0, minute=0) - timedelta(days=days)
    minima = {m: series([100.0] * days, start, 86_400) for m in balances if m in state.measures}
    return replace(state, past=Past(minima=minima))


def series(values: Sequence[float], start: datetime = T0, period_s: int = 60) -> Series:
    """A series with one value per period from `start`."""
    points = [(start + timedelta(seconds=i * period_s), v) for i, v in enumerate(values)]
    return Series.of(points, period_s, Status.OK if points else Status.NO_DATA)


def volume_state(
    volume_type="gp2",
    size=50,
    measures=None,
    attached_to="i-1",
    iops=None,
    throughput=None,
    volume_id="vol-1",
    region="us-east-1",
    status=Status.OK,
):
    """A volume's state built from hand-made measure series."""
    from types import MappingProxyType

    from analyzer.model.limits import volume_envelope
    from analyzer.model.resources import Volume
    from analyzer.model.state import ResourceState

    volume = Volume(volume_id, region, volume_type, size, "in-use", iops, throughput, attached_to)
    return ResourceState(
        ref=volume.ref,
        resource=volume,
        envelope=volume_envelope(volume),
        measures=MappingProxyType(dict(measures or {})),
        status=status,
        related=(attached_to,) if attached_to else (),
    )


def db_state(db, measures, status=Status.OK):
    """An RDS instance's state: its striped storage and its class, from hand-made series."""
    from types import MappingProxyType

    from analyzer.model.limits import instance_type_envelope
    from analyzer.model.rds_storage import db_storage_envelope, log_volume_envelope
    from analyzer.model.state import ResourceState

    return ResourceState(
        db.ref,
        db,
        db_storage_envelope(db),
        MappingProxyType(dict(measures)),
        status,
        class_envelope=instance_type_envelope(db.class_info),
        log_envelope=log_volume_envelope(db),
    )


def instance_state(
    type_info, measures=None, volume_ids=(), instance_id="i-1", region="us-east-1", detailed=True
):
    from types import MappingProxyType

    from analyzer.model.limits import instance_envelope
    from analyzer.model.resources import Instance
    from analyzer.model.state import ResourceState

    instance = Instance(
        instance_id, region, type_info.name, "running", detailed, tuple(volume_ids), type_info
    )
    return ResourceState(
        ref=instance.ref,
        resource=instance,
        envelope=instance_envelope(instance),
        measures=MappingProxyType(dict(measures or {})),
        status=Status.OK,
        related=tuple(volume_ids),
    )


def ruleset_of(*rules):
    """A rule set of these rules, as if loaded from a file."""

    from analyzer.analyze.rules import LoadedRule, RuleSet

    return RuleSet(tuple(LoadedRule(rule, Path("test.yaml")) for rule in rules))


def snapshot_of(*states, rules=(), minutes_of_data=30, settle_s=120):
    """A snapshot whose data ends `minutes_of_data` after T0, with each resource's outlook
    worked out as the analysis stage does, over the windows of `rules` (or the defaults)."""
    from analyzer.analyze.outlook import with_outlooks
    from analyzer.analyze.states import build

    data_end = T0 + timedelta(minutes=minutes_of_data)
    snap = build(data_end + timedelta(seconds=settle_s), data_end, states)
    return with_outlooks(snap, ruleset_of(*rules).forecast_windows)


def readings_of(snap):
    """Each resource's reading, as the analysis stage works it out."""
    from analyzer.analyze.reading import Readings

    return Readings(snap).all()


def analyze(*states, rules=None, minutes_of_data=30):
    """The analysis stage over these states with `rules` (default: the shipped rules): the
    snapshot with its outlooks, and what fires, with next bottlenecks and fixes."""
    from analyzer.analyze import prices
    from analyzer.analyze import rules as rule_files
    from analyzer.analyze.analysis import analyze as run
    from analyzer.analyze.catalog import Catalog
    from analyzer.analyze.states import build

    ruleset = rule_files.load() if rules is None else ruleset_of(*rules)
    data_end = T0 + timedelta(minutes=minutes_of_data)
    snap = build(data_end + timedelta(seconds=120), data_end, states)
    return run(snap, ruleset, Catalog(prices.load()))


def evaluate(rule, state, *others):
    """What one rule makes of `state` (beside `others`), concluded as a cycle concludes it:
    with the next bottleneck and the fixes."""
    from analyzer.analyze import prices
    from analyzer.analyze.analysis import conclude
    from analyzer.analyze.catalog import Catalog

    snap = snapshot_of(state, *others, rules=(rule,))
    finding = rule.evaluate(snap.get(state.ref.region, state.ref.resource_id), snap, snap.data_end)
    return conclude(finding, snap, Catalog(prices.load())) if finding is not None else None


GOLDEN = __import__("pathlib").Path(__file__).parent / "golden"


def assert_golden(name: str, text: str) -> None:
    """Compare with tests/golden/NAME; UPDATE_GOLDEN=1 rewrites it (review the diff)."""
    import os

    path = GOLDEN / name
    if os.environ.get("UPDATE_GOLDEN"):
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"{path} is missing: run with UPDATE_GOLDEN=1 and review it"
    assert text == path.read_text(encoding="utf-8"), f"{name} changed: UPDATE_GOLDEN=1 to accept"


TOOLS = Path(__file__).resolve().parent.parent / ".tools" / "bin"
"""Where .ci/run installs the tools no Debian package carries (helm, kustomize)."""


def external(*names: str, install: str) -> str:
    """The path of the first of these programs found on PATH or in .tools/bin.

    Skipped where none is, but never in CI, which installs them all.
    """
    import os
    import shutil

    import pytest

    for name in names:
        found = shutil.which(name) or shutil.which(name, path=str(TOOLS))
        if found:
            return found
    if os.environ.get("CI"):
        pytest.fail(f"{names[0]} is missing: .ci/run must install it ({install})")
    pytest.skip(f"{names[0]} is not installed ({install})")


def promtool(*args: str, stdin: str | None = None):
    """Run promtool (Debian's prometheus package, which CI installs)."""
    import subprocess

    binary = external("promtool", install="apt-get install prometheus")
    return subprocess.run([binary, *args], input=stdin, capture_output=True, text=True, check=False)


def shop_volume(volume_id: str = "vol-1", attached_to: str = "i-1"):
    """Incident 1's gp2 50 GiB volume: 1,500 IOPS of 4 KiB with 40 % of its credits left."""
    from analyzer.model.metrics import Measure
    from analyzer.model.units import KIB

    return volume_state(
        "gp2",
        50,
        {
            Measure.IOPS: series([1_500] * 30),
            Measure.THROUGHPUT: series([1_500 * 4 * KIB] * 30),
            Measure.AVG_IO_SIZE: series([4 * KIB] * 30),
            Measure.BURST_BALANCE: series([40.0] * 30),
        },
        volume_id=volume_id,
        attached_to=attached_to,
    )


def shop_analysis():
    """Incident 1's volume on its m5.large at 1,500 IOPS, analyzed: (snapshot, firing)."""
    from analyzer.model.metrics import Measure
    from analyzer.model.resources import InstanceType
    from analyzer.model.units import MB

    instance = instance_state(
        InstanceType("m5.large", 3_600, 18_750, 81.25 * MB, 593.75 * MB),
        {Measure.IOPS: series([1_500] * 30)},
        volume_ids=("vol-1",),
    )
    analysis = analyze(shop_volume(), instance)
    return analysis.snapshot, analysis.firing


def steady_gp2(iops, balance, size=50, io=4096):
    """A gp2 volume at a steady rate of `io`-byte I/O for 30 minutes, its balance steady."""
    from analyzer.model.metrics import Measure

    return volume_state(
        "gp2",
        size,
        {
            Measure.IOPS: series([iops] * 30),
            Measure.THROUGHPUT: series([iops * io] * 30),
            Measure.BURST_BALANCE: series([balance] * 30),
        },
    )


def gp2_of(iops, balance, size=50, io=4096):
    """A gp2 volume from a minute series of IOPS and of its balance (values, a Series, or
    None for a balance AWS does not publish)."""
    from analyzer.model.metrics import Measure

    measures = {Measure.IOPS: series(iops), Measure.THROUGHPUT: series([v * io for v in iops])}
    if balance is not None:
        measures[Measure.BURST_BALANCE] = (
            balance if isinstance(balance, Series) else series(balance)
        )
    return volume_state("gp2", size, measures)


def fixes_of(rule, state, *others):
    """The finding `rule` gives on `state`, which must give one, and its fixes."""
    finding = evaluate(rule, state, *others)
    assert finding is not None
    return finding, finding.remedies


def in_account(state, account_id: str, name: str = ""):
    """A resource's state as it is found in another account."""
    from dataclasses import replace

    resource = replace(state.resource, account_id=account_id, account_name=name)
    return replace(state, resource=resource, ref=resource.ref)


CSI_TAGS = {
    # As the EBS CSI driver tags a volume it provisions (aws-ebs-csi-driver,
    # pkg/driver/constants.go), with --k8s-tag-cluster-id=prod.
    "CSIVolumeName": "pvc-3f2a",
    "ebs.csi.aws.com/cluster": "true",
    "kubernetes.io/cluster/prod": "owned",
    "kubernetes.io/created-for/pv/name": "pvc-3f2a",
}


def as_claim(state, namespace: str = "db", name: str = "data-postgres-0"):
    """A volume's state as the EBS CSI driver provisioned it for a claim."""
    from dataclasses import replace

    tags = {
        **state.resource.tags,
        **CSI_TAGS,
        "kubernetes.io/created-for/pvc/namespace": namespace,
        "kubernetes.io/created-for/pvc/name": name,
    }
    resource = replace(state.resource, tags=tags)
    return replace(state, resource=resource, ref=resource.ref)


def record_grid(spends: list[float], seed: int = 3):
    """Fifteen days of 5-minute balances before T0, a drain of each `spend` at hours drawn at
    random (no two days alike), each falling over 10 minutes, holding its trough for 20 and
    refilling after; a spend of 100 empties the bucket."""
    import numpy as np

    from analyzer.model.past import Grid

    rng = np.random.default_rng(seed)
    values = np.full(15 * 288, 100.0, dtype=np.float32)
    slots = rng.choice(np.arange(10, len(values) - 40, 30), size=len(spends), replace=False)
    for slot, spend in zip(slots, spends, strict=True):
        trough = max(100.0 - spend, 0.0)
        values[slot : slot + 6] = (100 - spend / 2, trough, trough, trough, trough, trough)
        values[slot + 6 : slot + 30] = np.minimum(trough + 5 * np.arange(1, 25), 100.0)
    return Grid(T0 - timedelta(days=15), 300, values)


def refusal(tmp_path: Path, text: str) -> tuple[Path, str]:
    """The settings file `text`, written to `config.yaml`, and the one-line error loading it
    ends in."""
    path = tmp_path / "config.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        settings.load({}, path)
    message = str(info.value)
    assert "\n" not in message
    return path, message


def moto_database(tags: list[dict[str, str]] | None = None, identifier: str = "orders") -> None:
    """An RDS MySQL instance on gp2 200 GiB in moto's us-east-1, as `apply` finds one."""
    import boto3

    boto3.client("rds", "us-east-1").create_db_instance(
        DBInstanceIdentifier=identifier,
        DBInstanceClass="db.m5.large",
        Engine="mysql",
        AllocatedStorage=200,
        StorageType="gp2",
        MasterUsername="admin",
        MasterUserPassword="password1",
        Tags=tags or [],
    )
