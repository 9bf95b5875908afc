"""AWS's offers, as the analysis reads them (`catalog.Offers`): the instance types and DB
classes a region offers, from the Describe* calls, and their prices, from the Price List.

Each answer is asked for once and kept for the life of the process: the lists change with a
launch, not between cycles. A call that fails is logged once, answers nothing, and is tried
again after `RETRY_AFTER_S`; the analysis goes on, and its options say what is unknown.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Sequence
from typing import TypeVar

import structlog

from analyzer.collect.boundaries import Describer
from analyzer.collect.pricing import RETRY_AFTER_S, OnDemandPrices
from analyzer.errors import AwsAccessError, AwsCallError
from analyzer.model.resources import InstanceType

log = structlog.get_logger(__name__)

T = TypeVar("T")


class AwsOffers:
    """`describer(region)`: the region's Describe* calls; `prices`: the Price List, or None
    where it is not to be asked (the price file alone prices options)."""

    def __init__(
        self,
        describer: Callable[[str], Describer],
        prices: OnDemandPrices | None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._describer = describer
        self._prices = prices
        self._clock = clock
        self._types: dict[str, Sequence[InstanceType]] = {}
        self._classes: dict[tuple[str, str], Collection[str] | None] = {}
        self._retry_at: dict[tuple[str, ...], float] = {}

    def _ask(self, key: tuple[str, ...], call: Callable[[], T]) -> T | None:
        if self._clock() < self._retry_at.get(key, float("-inf")):
            return None
        try:
            return call()
        except (AwsAccessError, AwsCallError) as exc:
            log.warning("offers.skipped", error=str(exc), retry_in_s=RETRY_AFTER_S)
            self._retry_at[key] = self._clock() + RETRY_AFTER_S
            return None

    def instance_types(self, region: str) -> Sequence[InstanceType]:
        if region not in self._types:
            found = self._ask(
                ("types", region), lambda: self._describer(region).offered_instance_types()
            )
            if found is None:
                return ()
            self._types[region] = tuple(found)
        return self._types[region]

    def db_classes(self, engine: str, region: str) -> Collection[str] | None:
        key = (engine, region)
        if key not in self._classes:
            found = self._ask(
                ("classes", *key), lambda: self._describer(region).orderable_db_classes(engine)
            )
            if found is None:
                return None
            # An engine RDS lists nothing for is an engine this call does not know: unknown.
            self._classes[key] = frozenset(found) or None
        return self._classes[key]

    def instance_hourly(self, instance_type: str, region: str) -> float | None:
        return self._prices.instance_hourly(instance_type, region) if self._prices else None

    def db_class_hourly(
        self, instance_class: str, engine: str, region: str, multi_az: bool
    ) -> float | None:
        if self._prices is None:
            return None
        return self._prices.db_class_hourly(instance_class, engine, region, multi_az)

    def db_storage_per_gib(
        self, storage_type: str, engine: str, region: str, multi_az: bool
    ) -> float | None:
        if self._prices is None:
            return None
        return self._prices.db_storage_per_gib(storage_type, engine, region, multi_az)
