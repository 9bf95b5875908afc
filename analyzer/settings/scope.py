"""Which resources are watched: in which regions, with which tags."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, field_validator

from analyzer.settings.regions import region_names
from analyzer.settings.values import List, tag_filters


class Scope(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    region: List = ()
    """AWS regions to watch; empty means the SDK's region."""
    tag: List = ()
    """Only resources with these tags (Key=Value or Key), and what they are attached to."""

    @field_validator("region")
    @classmethod
    def _regions(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        return region_names(value)

    @field_validator("tag")
    @classmethod
    def _tags(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        return tag_filters(value)
