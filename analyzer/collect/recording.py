"""A recording: the inventory and the raw datapoints of a span of time, in one gzip'd JSON
file, for backtests and demos without credentials (`record`, `backtest --from`).

Only what CloudWatch and the Describe* calls returned is kept, so that a backtest over a
recording runs the very code a backtest over the live history runs, and finds the same.
"""

from __future__ import annotations

import gzip
import json
from array import array
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, is_dataclass
from datetime import UTC, datetime
from importlib.resources import files
from pathlib import Path
from typing import Any

from analyzer.errors import ConfigError
from analyzer.model.resources import (
    AgentMetrics,
    DbInstance,
    Initialization,
    Instance,
    InstanceType,
    Inventory,
    Modification,
    StorageVolume,
    Volume,
)
from analyzer.model.series import Series, Status

FORMAT = "ebs-analyzer-recording"
VERSION = 1

SHIPPED = Path(str(files("analyzer") / "data" / "recordings"))
"""The recordings the package ships (the image and the wheel hold them too)."""
SUFFIX = ".json.gz"

Raw = dict[str, dict[str, dict[str, Series]]]
"""By region, resource id, then metric name."""


@dataclass(frozen=True, slots=True)
class Recording:
    start: datetime
    end: datetime
    """The span the datapoints cover: `[start, end)`."""
    inventories: dict[str, Inventory]
    raw: Raw
    past: Raw = field(default_factory=dict)
    """The days before `start`, as the daemon would have read them then: each balance's
    5-minute `Minimum` and `Average` (named `BurstBalance:Minimum`, …) over fifteen days."""

    def regions(self) -> list[str]:
        """The AWS regions it covers (its keys are scopes where it was made across
        accounts)."""
        return sorted({i.region for i in self.inventories.values()})

    def accounts(self) -> dict[str, str]:
        """The accounts it was made across, id → name; none for one account unnamed."""
        return {i.account_id: i.account_name for i in self.inventories.values() if i.account_id}

    def resources(self) -> int:
        """How many volumes, instances and databases it holds, in every region."""
        return sum(
            len(i.volumes) + len(i.instances) + len(i.db_instances)
            for i in self.inventories.values()
        )


def _plain(value: Any) -> Any:
    if is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, datetime):
        return value.astimezone(UTC).isoformat()
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def _series(series: Series) -> dict[str, Any]:
    return {
        "period_s": series.period_s,
        "status": series.status.value,
        "error": series.error,
        "t": [int(t.timestamp()) for t in series.timestamps],
        "v": list(series.values),
    }


def write(path: Path, recording: Recording) -> None:
    document = {
        "format": FORMAT,
        "version": VERSION,
        "start": recording.start.astimezone(UTC).isoformat(),
        "end": recording.end.astimezone(UTC).isoformat(),
        "regions": {
            region: {
                "inventory": _plain(inventory),
                "series": {
                    rid: {metric: _series(s) for metric, s in by_metric.items()}
                    for rid, by_metric in recording.raw.get(region, {}).items()
                },
                "past": {
                    rid: {metric: _series(s) for metric, s in by_metric.items()}
                    for rid, by_metric in recording.past.get(region, {}).items()
                },
            }
            for region, inventory in recording.inventories.items()
        },
    }
    with gzip.open(path, "wt", encoding="utf-8") as out:
        json.dump(document, out, separators=(",", ":"))


def _type(raw: Mapping[str, Any] | None) -> InstanceType | None:
    if raw is None:
        return None
    return InstanceType(**{**raw, "architectures": tuple(raw.get("architectures", ()))})


def _volume(raw: Mapping[str, Any]) -> Volume:
    return Volume(
        **{
            **raw,
            "also_attached_to": tuple(raw.get("also_attached_to", ())),
            "modifications": tuple(
                Modification(
                    **{
                        **m,
                        "started": datetime.fromisoformat(m["started"]),
                        "target_fields": tuple((str(k), v) for k, v in m.get("target_fields", ())),
                        # Recordings made before these were kept have neither.
                        "original_fields": tuple(
                            (str(k), v) for k, v in m.get("original_fields", ())
                        ),
                        "ended": datetime.fromisoformat(m["ended"]) if m.get("ended") else None,
                    }
                )
                for m in raw.get("modifications", ())
            ),
            "initialization": (
                Initialization(**raw["initialization"]) if raw.get("initialization") else None
            ),
            "agent": _agent(raw.get("agent")),
            # Recordings made before it was kept have none.
            "created": datetime.fromisoformat(raw["created"]) if raw.get("created") else None,
        }
    )


def _agent(raw: Mapping[str, Any] | None) -> AgentMetrics | None:
    if not raw:
        return None
    return AgentMetrics(
        raw["namespace"],
        tuple((name, value) for name, value in raw["dimensions"]),
        tuple(raw["names"]),
    )


def _instance(raw: Mapping[str, Any]) -> Instance:
    return Instance(
        **{
            **raw,
            "volume_ids": tuple(raw.get("volume_ids", ())),
            "type_info": _type(raw.get("type_info")),
        }
    )


def _db(raw: Mapping[str, Any]) -> DbInstance:
    raw = {
        **raw,
        "additional_volumes": tuple(StorageVolume(**v) for v in raw.get("additional_volumes", ())),
        "pending": tuple(raw.get("pending", ())),
    }
    return DbInstance(**{**raw, "class_info": _type(raw.get("class_info"))})


def _inventory(raw: Mapping[str, Any]) -> Inventory:
    return Inventory(
        raw["region"],
        tuple(_volume(v) for v in raw.get("volumes", ())),
        tuple(_instance(i) for i in raw.get("instances", ())),
        tuple(_db(d) for d in raw.get("db_instances", ())),
        account_id=raw.get("account_id", ""),
        account_name=raw.get("account_name", ""),
    )


def inventory_document(inventory: Inventory) -> dict[str, Any]:
    """An inventory as plain JSON, as a recording keeps it."""
    document: dict[str, Any] = _plain(inventory)
    return document


def inventory_from(document: Mapping[str, Any]) -> Inventory:
    """The inventory of `inventory_document`; KeyError, TypeError or ValueError where broken."""
    return _inventory(document)


class _Axes:
    """The time axes read so far: series over the same minutes share one tuple of the same
    datetimes, as the daemon's history holds them (a fortnight of minutes is 20,000 of them,
    and a resource has a dozen series; kept apart, a fleet's recording took gigabytes)."""

    def __init__(self) -> None:
        self.moments: dict[float, datetime] = {}
        self.axes: dict[tuple[float, ...], tuple[datetime, ...]] = {}

    def of(self, seconds: list[float]) -> tuple[datetime, ...]:
        key = tuple(seconds)
        found = self.axes.get(key)
        if found is None:
            moments = self.moments
            found = self.axes[key] = tuple(
                moments.get(t) or moments.setdefault(t, datetime.fromtimestamp(t, UTC)) for t in key
            )
        return found


def _read_series(raw: Mapping[str, Any], axes: _Axes) -> Series:
    return Series(
        axes.of(raw["t"]),
        array("d", (float(v) for v in raw["v"])),
        int(raw["period_s"]),
        Status(raw["status"]),
        raw.get("error"),
    )


def shipped() -> dict[str, Path]:
    """The shipped recordings by name: `incident-3-fortnight`, without the suffix."""
    return {p.name.removesuffix(SUFFIX): p for p in sorted(SHIPPED.glob(f"*{SUFFIX}"))}


def resolve(source: str | Path) -> Path:
    """The file `--from` names: a path, or else a shipped recording's name."""
    path = Path(source)
    if path.exists():
        return path
    found = shipped().get(str(source).removesuffix(SUFFIX))
    if found is not None:
        return found
    names = ", ".join(shipped()) or "none"
    raise ConfigError(
        f"{source}: no such file, nor a shipped recording (shipped: {names}; "
        "`ebs-analyzer recordings` lists them)"
    )


def read(path: Path) -> Recording:
    """The recording at `path`; a file that is not one is a ConfigError naming it."""
    try:
        with gzip.open(path, "rt", encoding="utf-8") as source:
            document = json.load(source)
    except gzip.BadGzipFile:
        raise ConfigError(f"{path}: not a recording (not gzip'd)") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read a recording: {exc.strerror or exc}") from None
    except (ValueError, EOFError) as exc:
        raise ConfigError(f"{path}: not a recording: {exc}") from None
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise ConfigError(f"{path}: not a recording (no format {FORMAT!r})")
    if document.get("version") != VERSION:
        raise ConfigError(
            f"{path}: recording version {document.get('version')!r}; this version reads {VERSION}"
        )
    axes = _Axes()
    try:
        regions = document["regions"]
        return Recording(
            datetime.fromisoformat(document["start"]),
            datetime.fromisoformat(document["end"]),
            {region: _inventory(r["inventory"]) for region, r in regions.items()},
            {
                region: {
                    rid: {metric: _read_series(s, axes) for metric, s in by_metric.items()}
                    for rid, by_metric in r.get("series", {}).items()
                }
                for region, r in regions.items()
            },
            {
                region: {
                    rid: {metric: _read_series(s, axes) for metric, s in by_metric.items()}
                    for rid, by_metric in r.get("past", {}).items()
                }
                for region, r in regions.items()
            },
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise ConfigError(f"{path}: a broken recording: {type(exc).__name__}: {exc}") from None
