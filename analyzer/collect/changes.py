"""The calls that change a resource, and the fresh reads `apply` makes around them: one volume
or one RDS instance described again, a volume's modifications, ModifyVolume and
ModifyDBInstance.

These are the only calls the analyzer makes that change an account. Each goes out once,
through a client without automatic retries (`Clients.once`): after a timeout or a 5xx, AWS
may have acted, and `apply` reads the resource back rather than send the change again. With
`DryRun` where EC2 offers it: EC2 answers a dry run that would succeed with the error code
`DryRunOperation`, one the identity may not make with `UnauthorizedOperation` (Amazon EC2 API
Reference, "Common client error codes").
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Protocol

from botocore.exceptions import ClientError

from analyzer.collect.aws import Clients, calling, error_code
from analyzer.collect.describe import parse_db_instance, parse_modification, parse_volume
from analyzer.collect.reply import Reply
from analyzer.model.resources import DbInstance, Modification, Volume

DRY_RUN_WOULD_SUCCEED = "DryRunOperation"
NOT_FOUND = frozenset(
    {
        "InvalidVolume.NotFound",
        "InvalidVolumeID.Malformed",
        "DBInstanceNotFound",
        "DBInstanceNotFoundFault",
    }
)
"""A resource that is not there, or an id that could name none: bad input, not an AWS error."""


@dataclass(frozen=True, slots=True)
class Answered:
    """What a modifying call answered: the modification it started (a volume's), or, for a
    dry run, that it would have succeeded."""

    modification: Modification | None = None
    dry_run: bool = False


class Changer(Protocol):
    """The calls `apply` makes in one region. Failures raise AwsAccessError or AwsCallError,
    naming the call; a resource that does not exist is None, not an error."""

    @property
    def where(self) -> str: ...

    def volume(self, volume_id: str) -> Volume | None:
        """The volume as it is now, with its tags and the modifications AWS reports."""
        ...

    def db_instance(self, db_instance_id: str) -> DbInstance | None:
        """The RDS instance as it is now, with its tags."""
        ...

    def modify_volume(self, volume_id: str, target: Mapping[str, Any], dry_run: bool) -> Answered:
        """ModifyVolume to `target` (volume_type, size_gib, iops, throughput_mibps)."""
        ...

    def modify_db_storage(self, db_instance_id: str, target: Mapping[str, Any]) -> Answered:
        """ModifyDBInstance of its storage to `target` (storage_type, allocated_gib, iops,
        throughput_mibps), applied immediately. RDS offers no dry run."""
        ...


class Ec2RdsChanges:
    """`Changer` over boto3's EC2 and RDS clients of one region (of one account)."""

    def __init__(self, clients: Clients, where: str | None = None) -> None:
        self._clients = clients
        self.where = where or clients.region

    def volume(self, volume_id: str) -> Volume | None:
        with calling("ec2:DescribeVolumes", self.where):
            try:
                page = self._clients.ec2.describe_volumes(VolumeIds=[volume_id])
            except ClientError as exc:
                if error_code(exc) in NOT_FOUND:
                    return None
                raise
            found = Reply(page).each("Volumes")
            if not found:
                return None
            volume = parse_volume(found[0], self._clients.region)
        with calling("ec2:DescribeVolumesModifications", self.where):
            pages = self._clients.ec2.get_paginator("describe_volumes_modifications").paginate(
                Filters=[{"Name": "volume-id", "Values": [volume_id]}]
            )
            mods = [
                parse_modification(m)
                for page in pages
                for m in Reply(page).each("VolumesModifications")
            ]
        mods.sort(key=lambda m: m.started, reverse=True)
        return replace(volume, modifications=tuple(mods))

    def db_instance(self, db_instance_id: str) -> DbInstance | None:
        with calling("rds:DescribeDBInstances", self.where):
            try:
                page = self._clients.rds.describe_db_instances(DBInstanceIdentifier=db_instance_id)
            except ClientError as exc:
                if error_code(exc) in NOT_FOUND:
                    return None
                raise
            found = Reply(page).each("DBInstances")
            return parse_db_instance(found[0], self._clients.region) if found else None

    def modify_volume(self, volume_id: str, target: Mapping[str, Any], dry_run: bool) -> Answered:
        asked: dict[str, Any] = {
            "VolumeId": volume_id,
            "VolumeType": target["volume_type"],
            "Size": int(target["size_gib"]),
            "DryRun": dry_run,
        }
        if target.get("iops"):
            asked["Iops"] = int(target["iops"])
        if target.get("throughput_mibps"):
            asked["Throughput"] = int(target["throughput_mibps"])
        with calling("ec2:ModifyVolume", self.where):
            try:
                answer = self._clients.once("ec2").modify_volume(**asked)
            except ClientError as exc:
                if dry_run and error_code(exc) == DRY_RUN_WOULD_SUCCEED:
                    return Answered(dry_run=True)
                raise
            return Answered(parse_modification(Reply(answer).member("VolumeModification")))

    def modify_db_storage(self, db_instance_id: str, target: Mapping[str, Any]) -> Answered:
        asked: dict[str, Any] = {
            "DBInstanceIdentifier": db_instance_id,
            "StorageType": target["storage_type"],
            "AllocatedStorage": int(target["allocated_gib"]),
            "ApplyImmediately": True,
        }
        if target.get("iops"):
            asked["Iops"] = int(target["iops"])
        if target.get("throughput_mibps"):
            asked["StorageThroughput"] = int(target["throughput_mibps"])
        with calling("rds:ModifyDBInstance", self.where):
            self._clients.once("rds").modify_db_instance(**asked)
        return Answered()
