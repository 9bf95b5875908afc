"""A configuration an operator names, `vol-0abc:type=gp3,iops=6000`, checked against what AWS
sells: what `backtest --what-if` tries and `apply` changes."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from analyzer.errors import ConfigError
from analyzer.model import limits
from analyzer.model.findings import Change
from analyzer.model.limits import Envelope, instance_envelope
from analyzer.model.rds_storage import (
    GP3_SQLSERVER,
    GP3_STRIPED,
    PROVISIONED_SINGLE,
    PROVISIONED_SQLSERVER,
    PROVISIONED_STRIPED,
    STRIPED_FROM_GIB,
    db_storage_envelope,
    rds_stripes,
)
from analyzer.model.rds_storage import family as rds_family
from analyzer.model.resources import DbInstance, Instance, Inventory, ResourceType, Volume

KEYS = {
    "type": ("volume_type", "storage_type", "instance_type"),
    "size": ("size_gib", "allocated_gib", None),
    "iops": ("iops", "iops", None),
    "throughput": ("throughput_mibps", "throughput_mibps", None),
    "stripes": ("volumes", None, None),
}
"""What can be tried, and the field of a volume's change, an RDS instance's and an EC2
instance's it sets."""
KINDS = ("a volume", "an RDS instance's storage", "an EC2 instance")
VOLUME_TYPES = ("gp2", "gp3", "io1", "io2", "st1", "sc1", "standard")
RDS_STORAGE_TYPES = ("gp2", "gp3", "io1", "io2")


@dataclass(frozen=True, slots=True)
class Asked:
    """One `--what-if` or `apply`: a resource, and the configuration to try on it or give it."""

    text: str
    resource_id: str
    settings: Mapping[str, str | int]
    flag: str = "--what-if"
    """What named it, in messages: `--what-if`, `apply`."""

    @property
    def where(self) -> str:
        """`--what-if vol-0abc:type=gp4`: what a message about it starts with."""
        return f"{self.flag} {self.text}"

    @classmethod
    def parse(cls, text: str, flag: str = "--what-if") -> Asked:
        """`vol-0abc:type=gp3,iops=6000,throughput=250`, `orders-replica:size=400`."""
        rid, sep, rest = text.partition(":")
        if not sep or not rid or not rest:
            raise ConfigError(
                f"{flag} {text}: expected ID:KEY=VALUE[,KEY=VALUE…], e.g. "
                "vol-0abc:type=gp3,iops=6000"
            )
        settings: dict[str, str | int] = {}
        for item in rest.split(","):
            key, eq, value = item.partition("=")
            key = key.strip()
            if key in settings:
                raise ConfigError(f"{flag} {text}: {key} is given twice")
            if key not in KEYS:
                raise ConfigError(f"{flag} {text}: unknown key {key!r} (known: {', '.join(KEYS)})")
            if not eq or not value.strip():
                raise ConfigError(f"{flag} {text}: {key} has no value")
            if key == "type":
                settings[key] = value.strip().lower()
                continue
            try:
                number = int(value.strip().replace("_", ""))
            except ValueError:
                raise ConfigError(f"{flag} {text}: {key}={value} is not a whole number") from None
            if number <= 0:
                raise ConfigError(f"{flag} {text}: {key}={value} must be above zero")
            settings[key] = number
        return cls(text, rid.strip(), settings, flag)


Tryable = Volume | DbInstance | Instance


def configured(
    asked: Asked, resource: Tryable, inventory: Inventory
) -> tuple[Change, dict[str, Any], Envelope | None]:
    index = 2 if isinstance(resource, Instance) else 1 if isinstance(resource, DbInstance) else 0
    after: dict[str, Any] = {}
    before: dict[str, Any]
    for key, value in asked.settings.items():
        field = KEYS[key][index]
        if field is None:
            raise ConfigError(f"{asked.where}: {KINDS[index]} has no {key}")
        after[field] = value
    if isinstance(resource, Instance):
        if "instance_type" not in after:
            raise ConfigError(f"{asked.where}: an EC2 instance needs type=")
        before = {"instance_type": resource.instance_type}
        change = Change(ResourceType.INSTANCE, asked.resource_id, before, after)
        return change, before, instance_envelope(resource)
    if isinstance(resource, DbInstance):
        before = configuration(resource)
        same = after.get("storage_type", resource.storage_type) == resource.storage_type
        held = _provisioned(str(after.get("storage_type", resource.storage_type)))
        kept = {
            k: v
            for k, v in before.items()
            if (same and held.get(k, True)) or k in ("storage_type", "allocated_gib")
        }
        after = {**kept, **after}
        _check_rds(asked, after, resource)
        today = db_storage_envelope(resource)
        kind = ResourceType.DB_INSTANCE
    else:
        before = configuration(resource)
        instance = next(
            (i for i in inventory.instances if i.instance_id == resource.attached_to), None
        )
        info = instance.type_info if instance is not None else None
        today = limits.volume_envelope(resource, info)
        kind = ResourceType.VOLUME
        same = after.get("volume_type", resource.volume_type) == resource.volume_type
        held = _provisioned(str(after.get("volume_type", resource.volume_type)))
        kept = {k: v for k, v in before.items() if (same and held.get(k, True)) or k == "size_gib"}
        after = {**kept, **after}
        _check_volume(asked, after)
    before = {k: v for k, v in before.items() if v is not None}
    return Change(kind, asked.resource_id, before, after), before, today


def configuration(resource: Volume | DbInstance) -> dict[str, Any]:
    """A volume's, or an RDS instance's storage's, configuration by the fields a fix sets;
    None where AWS gives none."""
    if isinstance(resource, DbInstance):
        return {
            "storage_type": resource.storage_type,
            "allocated_gib": resource.allocated_gib,
            "iops": resource.iops,
            "throughput_mibps": resource.throughput_mibps,
        }
    return {
        "volume_type": resource.volume_type,
        "size_gib": resource.size_gib,
        "iops": resource.iops,
        "throughput_mibps": resource.throughput_mibps,
    }


def _provisioned(kind: str) -> dict[str, bool]:
    """Which of a type's described values it provisions, and so keeps when only its size is
    changed: DescribeVolumes gives a gp2 volume's baseline as its `Iops` (Amazon EC2 API
    Reference, Volume: "For gp2 volumes, this represents the baseline performance"), which
    is no setting of its own."""
    return {"iops": kind in ("gp3", "io1", "io2"), "throughput_mibps": kind == "gp3"}


def _check_volume(asked: Asked, after: Mapping[str, Any]) -> None:
    """What AWS sells (Amazon EBS User Guide, "Amazon EBS volume types"; DOMAIN.md)."""
    kind, size = str(after["volume_type"]), int(after["size_gib"])
    iops, mibps = after.get("iops"), after.get("throughput_mibps")
    if kind not in VOLUME_TYPES:
        _bad(asked, f"type {kind} is not an EBS volume type ({', '.join(VOLUME_TYPES)})")
    largest = 65_536 if kind in ("gp3", "io2") else limits.MAX_VOLUME_GIB
    if size > largest:
        _bad(asked, f"{kind} holds at most {largest:,} GiB")
    if kind in ("st1", "sc1") and size < limits.ST1_MIN_GIB:
        _bad(asked, f"{kind} starts at {limits.ST1_MIN_GIB} GiB")
    if kind in ("io1", "io2") and not iops:
        _bad(asked, f"{kind} needs iops=")
    if kind not in ("gp3", "io1", "io2") and (iops or mibps):
        _bad(asked, f"{kind} has no provisioned IOPS or throughput")
    if kind in ("io1", "io2") and mibps:
        _bad(asked, f"{kind}'s throughput follows its IOPS: leave throughput= out")
    ceilings = {
        "gp3": (limits.GP3_MAX_IOPS, limits.GP3_IOPS_PER_GIB),
        "io1": (limits.IO1_MAX_IOPS, limits.IO1_IOPS_PER_GIB),
        "io2": (limits.IO2_MAX_IOPS, limits.IO2_IOPS_PER_GIB),
    }
    if kind in ceilings and iops:
        most, per_gib = ceilings[kind]
        ceiling = min(most, per_gib * size)
        if int(iops) > ceiling:
            _bad(asked, f"{kind} at {size:,} GiB provisions at most {ceiling:,} IOPS")
    if kind == "gp3":
        wanted = int(iops) if iops else limits.GP3_INCLUDED_IOPS
        if wanted < limits.GP3_INCLUDED_IOPS:
            _bad(asked, f"gp3 includes {limits.GP3_INCLUDED_IOPS:,} IOPS: ask at least that")
        most = max(
            min(limits.GP3_MAX_MIBPS, int(wanted * limits.GP3_MIBPS_PER_IOPS)),
            limits.GP3_INCLUDED_MIBPS,
        )
        if mibps and not limits.GP3_INCLUDED_MIBPS <= int(mibps) <= most:
            _bad(asked, f"gp3 with {wanted:,} IOPS provisions 125 to {most:,} MiB/s")


RDS_MIN_GIB = 20
RDS_MAX_GIB = {"sqlserver": 16_384}
"""RDS's storage sizes: 20 GiB to 64 TiB, SQL Server's to 16 TiB (Amazon RDS User Guide,
"Amazon RDS DB instance storage")."""
RDS_MAX_GIB_ELSE = 65_536


def _check_rds(asked: Asked, after: Mapping[str, Any], db: DbInstance) -> None:
    """What RDS sells (Amazon RDS User Guide, "Amazon RDS DB instance storage"; the ranges
    `model/rds_storage.py` models): storage grows, never shrinks; gp2 provisions nothing;
    gp3 provisions IOPS and throughput only from the striping threshold (or on SQL Server);
    io1 and io2 provision IOPS within their ratio and their ceiling."""
    kind = str(after.get("storage_type", db.storage_type))
    size = int(after.get("allocated_gib") or db.allocated_gib)
    iops, mibps = after.get("iops"), after.get("throughput_mibps")
    engine = rds_family(db.engine)
    if kind not in RDS_STORAGE_TYPES:
        _bad(asked, f"type {kind} is not an RDS storage type ({', '.join(RDS_STORAGE_TYPES)})")
    largest = RDS_MAX_GIB.get(engine, RDS_MAX_GIB_ELSE)
    if not RDS_MIN_GIB <= size <= largest:
        _bad(asked, f"RDS storage is {RDS_MIN_GIB} to {largest:,} GiB for {db.engine}")
    if size < db.allocated_gib:
        _bad(asked, f"RDS storage grows, never shrinks: it has {db.allocated_gib:,} GiB")
    if kind == "gp2" and (iops or mibps):
        _bad(asked, "gp2 has no provisioned IOPS or throughput")
    striped = rds_stripes(db.engine, size) > 1
    if kind == "gp3" and (iops or mibps):
        _check_rds_gp3(asked, engine, db.engine, size, striped, iops, mibps)
    if kind in ("io1", "io2"):
        wanted = int(iops or db.iops or 0)
        if not wanted:
            _bad(asked, f"{kind} needs iops=")
        if mibps:
            _bad(asked, f"{kind}'s throughput follows its IOPS: leave throughput= out")
        ceiling = (
            PROVISIONED_SQLSERVER
            if engine == "sqlserver"
            else PROVISIONED_STRIPED
            if striped
            else PROVISIONED_SINGLE
        )
        per_gib = limits.IO2_IOPS_PER_GIB if kind == "io2" else limits.IO1_IOPS_PER_GIB
        ceiling_iops = int(min(ceiling.iops, per_gib * size))
        if wanted > ceiling_iops:
            _bad(asked, f"{kind} at {size:,} GiB provisions at most {ceiling_iops:,} IOPS")


def _check_rds_gp3(
    asked: Asked, family: str, engine: str, size: int, striped: bool, iops: Any, mibps: Any
) -> None:
    if family == "sqlserver":
        least, most = (3_000, 125), GP3_SQLSERVER
    elif striped:
        least, most = (12_000, 500), GP3_STRIPED
    else:
        threshold = STRIPED_FROM_GIB.get(family, 0)
        _bad(asked, f"{engine} gp3 provisions IOPS and throughput from {threshold:,} GiB")
        return
    if iops and not least[0] <= int(iops) <= most.iops:
        _bad(asked, f"gp3 at {size:,} GiB provisions {least[0]:,} to {most.iops:,.0f} IOPS")
    if mibps and not least[1] <= int(mibps) <= most.throughput_mibps:
        _bad(
            asked,
            f"gp3 at {size:,} GiB provisions {least[1]:,} to {most.throughput_mibps:,.0f} MiB/s",
        )


def _bad(asked: Asked, why: str) -> None:
    raise ConfigError(f"{asked.where}: {why}")


def spelled(after: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in after.items() if v is not None)


def described(config: Mapping[str, Any], resource_type: ResourceType) -> str:
    """A configuration as an operator reads it: `gp3 400 GiB, 6,000 IOPS, 250 MiB/s`."""
    if config.get("instance_type"):
        return str(config["instance_type"])
    kind = config.get("volume_type") or config.get("storage_type")
    size = config.get("size_gib") or config.get("allocated_gib")
    said = [f"{kind} {int(size):,} GiB" if size else str(kind)]
    if config.get("iops"):
        said.append(f"{int(config['iops']):,} IOPS")
    if config.get("throughput_mibps"):
        said.append(f"{int(config['throughput_mibps']):,} MiB/s")
    if int(config.get("volumes") or 1) > 1:
        said.append(f"striped over {int(config['volumes'])}")
    return ", ".join(said)
