"""Which CloudWatch metrics each resource has: no more, since every metric requested is billed.

Nothing is asked for a detached volume or a stopped instance (CloudWatch has nothing to give),
BurstBalance only for bucket volume types, the instance balances only for instance types whose
EBS baseline is below their maximum, and the "exceeded" checks only on Nitro.
"""

from __future__ import annotations

from dataclasses import dataclass

from analyzer.model.limits import db_storage_envelope, has_burst_balance
from analyzer.model.resources import DbInstance, Instance, Volume

VOLUME_SUMS = (
    "VolumeReadOps",
    "VolumeWriteOps",
    "VolumeReadBytes",
    "VolumeWriteBytes",
    "VolumeTotalReadTime",
    "VolumeTotalWriteTime",
    "VolumeIdleTime",
)

INSTANCE_SUMS = ("EBSReadOps", "EBSWriteOps", "EBSReadBytes", "EBSWriteBytes")
VOLUME_CHECKS = ("VolumeIOPSExceededCheck", "VolumeThroughputExceededCheck")
INSTANCE_CHECKS = ("InstanceEBSIOPSExceededCheck", "InstanceEBSThroughputExceededCheck")
INSTANCE_BALANCES = ("EBSIOBalance%", "EBSByteBalance%")
VOLUME_PERIOD_S = 60
DETAILED_PERIOD_S = 60
BASIC_PERIOD_S = 300


@dataclass(frozen=True, slots=True)
class MetricQuery:
    resource_id: str
    namespace: str
    metric: str
    dimension: str
    stat: str
    period_s: int


def for_volume(volume: Volume, nitro: bool | None = None) -> list[MetricQuery]:
    if not volume.active:
        return []

    def q(metric: str, stat: str) -> MetricQuery:
        return MetricQuery(volume.volume_id, "AWS/EBS", metric, "VolumeId", stat, VOLUME_PERIOD_S)

    out = [q(m, "Sum") for m in VOLUME_SUMS]
    out.append(q("VolumeQueueLength", "Average"))
    if has_burst_balance(volume):
        out.append(q("BurstBalance", "Average"))
    if nitro is not False:
        out.extend(q(m, "Maximum") for m in VOLUME_CHECKS)
    return out


DB_RATES = ("ReadIOPS", "WriteIOPS", "ReadThroughput", "WriteThroughput")
DB_GAUGES = ("ReadLatency", "WriteLatency", "DiskQueueDepth", "FreeableMemory")


def for_db_instance(db: DbInstance) -> list[MetricQuery]:
    """AWS/RDS metrics are already per second: their Average over a minute is the rate."""
    if not db.active:
        return []

    def q(metric: str) -> MetricQuery:
        return MetricQuery(
            db.db_instance_id, "AWS/RDS", metric, "DBInstanceIdentifier", "Average", VOLUME_PERIOD_S
        )

    out = [q(m) for m in (*DB_RATES, *DB_GAUGES)]
    storage = db_storage_envelope(db)
    if storage is not None and storage.bucket is not None:
        out.append(q("BurstBalance"))
    if db.class_info is not None and db.class_info.ebs_bursts:
        out.extend(q(m) for m in INSTANCE_BALANCES)
    return out


def for_instance(instance: Instance) -> list[MetricQuery]:
    if not instance.active:
        return []
    period = DETAILED_PERIOD_S if instance.detailed_monitoring else BASIC_PERIOD_S

    def q(metric: str, stat: str) -> MetricQuery:
        return MetricQuery(instance.instance_id, "AWS/EC2", metric, "InstanceId", stat, period)

    out = [q(m, "Sum") for m in INSTANCE_SUMS]
    info = instance.type_info
    if info is not None and info.ebs_bursts:
        out.extend(q(m, "Average") for m in INSTANCE_BALANCES)
    if info is None or info.nitro is not False:
        out.extend(q(m, "Maximum") for m in INSTANCE_CHECKS)
    return out
