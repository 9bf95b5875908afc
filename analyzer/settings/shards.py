"""Which shard of the resources this process watches, of how many."""

from __future__ import annotations

import os
import socket

from pydantic import BaseModel, ConfigDict, Field, model_validator

from analyzer.collect.shards import WHOLE, Shard, ordinal
from analyzer.errors import ConfigError


class Shards(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    shard: int | None = Field(default=None, ge=0)
    """This process's shard, from 0; unset with `total_shards` above 1, the ordinal of the
    StatefulSet pod it runs in (the end of its host name)."""
    total_shards: int = Field(default=1, ge=1, le=1000)
    """Split the resources over this many processes by a stable hash: an instance with its
    volumes, an RDS instance with its storage, each in one shard."""

    @model_validator(mode="after")
    def _shard_in_total(self) -> Shards:
        if self.shard is not None and self.shard >= self.total_shards:
            raise ValueError(
                f"shard ({self.shard}) must be below total_shards ({self.total_shards}): "
                "shards count from 0"
            )
        return self

    def sharding(self) -> Shard:
        """The shard this process watches: the whole where there is one."""
        if self.total_shards == 1:
            return WHOLE
        if self.shard is not None:
            return Shard(self.shard, self.total_shards)
        name = os.environ.get("POD_NAME") or socket.gethostname()
        found = ordinal(name)
        if found is None or found >= self.total_shards:
            raise ConfigError(
                f"total_shards is {self.total_shards} but no shard is given, and the host "
                f"name {name!r} ends in no StatefulSet ordinal below it: set --shard "
                "(EBS_ANALYZER_SHARD)"
            )
        return Shard(found, self.total_shards)
