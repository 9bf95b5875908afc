"""AWS regions by name: well formed, and known to botocore or warned of, with a guess."""

from __future__ import annotations

import re
from functools import cache

import structlog
from botocore.loaders import create_loader

from analyzer.yamlfile import nearest

log = structlog.get_logger(__name__)

REGION = re.compile(r"[a-z]{2}(-[a-z]+)+-\d+")
"""An AWS region's name: `us-east-1`, `eu-central-2`, `us-gov-west-1`."""


def region_names(value: tuple[str, ...]) -> tuple[str, ...]:
    for item in value:
        if not REGION.fullmatch(item):
            raise ValueError(f"{item!r} is not an AWS region's name{region_hint(item)}")
        if item not in known_regions():
            # Well formed: a region newer than this botocore, or a slip (`eu-centrl-1`).
            log.warning(
                "settings.region_unknown",
                region=item,
                reason=f"not a region this botocore knows{region_hint(item)}",
            )
    return value


@cache
def known_regions() -> frozenset[str]:
    """The regions botocore's endpoint data names, in every partition: read from the data
    itself, not through a session, which would read the AWS profile (and refuse a missing one
    before the settings are even loaded)."""
    endpoints = create_loader().load_data("endpoints")
    return frozenset(region for p in endpoints["partitions"] for region in p["regions"])


def region_hint(name: str) -> str:
    """`(such as us-east-1; did you mean 'us-east-1'?)`, from the regions botocore knows."""
    guess = nearest(name, sorted(known_regions() - {name}))
    return f" (such as us-east-1; did you mean {guess!r}?)" if guess else " (such as us-east-1)"
