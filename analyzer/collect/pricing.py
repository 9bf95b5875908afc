"""On-demand prices from the AWS Price List Query API (`pricing:GetProducts`).

The API is served from a few regions (us-east-1 among them) for every region's prices. Each
product comes back as a JSON document; its `terms.OnDemand` holds the USD price per unit
(hours for instances and classes, GB-months for RDS storage). One lookup per product and
region, kept for the life of the process; a price that cannot be found, or a call that fails,
is None, never a guess (DOMAIN.md). A failed lookup is tried again after `RETRY_AFTER_S`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from typing import Any

import structlog

from analyzer.collect.aws import Clients, calling
from analyzer.collect.reply import OffContract, Reply
from analyzer.errors import AwsAccessError, AwsCallError

log = structlog.get_logger(__name__)

PRICING_REGION = "us-east-1"
"""Where the Price List Query API answers for every region's prices."""
MAX_PAGES = 20
ENGINES = {"mysql": "MySQL", "postgres": "PostgreSQL", "mariadb": "MariaDB"}
"""RDS engines priced here: the open-source ones. Oracle, SQL Server and Db2 prices depend
on edition and licence model: unpriced rather than guessed."""

STORAGE_TYPES = {
    "gp2": "General Purpose",
    "gp3": "General Purpose-GP3",
    "io1": "Provisioned IOPS",
    "io2": "Provisioned IOPS-IO2",
}
"""RDS storage types as the Price List's `volumeType` names them."""
HOURS = ("Hrs", "Hours")
GB_MONTHS = ("GB-Mo",)
RETRY_AFTER_S = 900.0
DENIED = frozenset({"AccessDenied", "AccessDeniedException", "UnauthorizedOperation"})
"""Codes that mean the Price List is not allowed: asked no more. Anything else (unreachable,
expired credentials, throttling) is tried again after `RETRY_AFTER_S`."""

Key = tuple[str, ...]


class OnDemandPrices:
    """Hourly on-demand USD prices. `client` is a boto3 `pricing` client, whose paginator
    follows `NextToken`."""

    def __init__(self, client: Any, clock: Callable[[], float] = time.monotonic) -> None:
        self._client = client
        self._clock = clock
        self._known: dict[Key, float | None] = {}
        self._retry_at: dict[Key, float] = {}
        self._denied = False
        self._failing = False
        """A failure has been logged and no lookup has succeeded since: one line an outage."""

    @classmethod
    def connect(cls) -> OnDemandPrices:
        """Through boto3's standard chain; no call is made before the first lookup."""
        return cls(Clients.for_region(PRICING_REGION).client("pricing"))

    def instance_hourly(self, instance_type: str, region: str) -> float | None:
        """Linux, shared tenancy, no pre-installed software: what the instance costs alone."""
        return self._price(
            "AmazonEC2",
            {
                "instanceType": instance_type,
                "regionCode": region,
                "operatingSystem": "Linux",
                "tenancy": "Shared",
                "preInstalledSw": "NA",
                "capacitystatus": "Used",
            },
        )

    def db_class_hourly(
        self, instance_class: str, engine: str, region: str, multi_az: bool = False
    ) -> float | None:
        database = ENGINES.get(engine)
        if database is None:
            return None
        return self._price(
            "AmazonRDS",
            {
                "instanceType": instance_class,
                "regionCode": region,
                "databaseEngine": database,
                "deploymentOption": "Multi-AZ" if multi_az else "Single-AZ",
            },
        )

    def db_storage_per_gib(
        self, storage_type: str, engine: str, region: str, multi_az: bool = False
    ) -> float | None:
        """RDS storage a GB-month (AWS bills storage in GiB and names the unit GB-Mo)."""
        database, volume = ENGINES.get(engine), STORAGE_TYPES.get(storage_type)
        if database is None or volume is None:
            return None
        return self._price(
            "AmazonRDS",
            {
                "productFamily": "Database Storage",
                "volumeType": volume,
                "regionCode": region,
                "databaseEngine": database,
                "deploymentOption": "Multi-AZ" if multi_az else "Single-AZ",
            },
            GB_MONTHS,
        )

    def _price(
        self, service: str, filters: Mapping[str, str], unit: tuple[str, ...] = HOURS
    ) -> float | None:
        key = (service, *sorted(f"{k}={v}" for k, v in filters.items()))
        if key in self._known:
            return self._known[key]
        if self._denied or self._clock() < self._retry_at.get(key, float("-inf")):
            return None
        try:
            documents = self._products(service, filters)
        except (AwsAccessError, AwsCallError) as exc:
            if isinstance(exc, AwsAccessError) and exc.code in DENIED:
                self._denied = True
                log.warning("pricing.skipped", error=str(exc))
                return None
            if not self._failing:
                log.warning("pricing.failed", error=str(exc), retry_in_s=RETRY_AFTER_S)
            self._failing = True
            self._retry_at[key] = self._clock() + RETRY_AFTER_S
            return None
        self._failing = False
        prices = [p for d in documents if (p := on_demand_price(d, unit)) is not None]
        found = min(prices) if prices else None
        self._known[key] = found
        return found

    def _products(self, service: str, filters: Mapping[str, str]) -> list[Mapping[str, Any]]:
        kwargs: dict[str, Any] = {
            "ServiceCode": service,
            "Filters": [
                {"Type": "TERM_MATCH", "Field": field, "Value": value}
                for field, value in filters.items()
            ],
            "FormatVersion": "aws_v1",
        }
        documents: list[Mapping[str, Any]] = []
        with calling("pricing:GetProducts", PRICING_REGION):
            pages = self._client.get_paginator("get_products").paginate(**kwargs)
            for number, page in enumerate(pages, start=1):
                answer = Reply(page)
                documents += [_document(d) for d in answer.texts("PriceList")]
                # Checked before the paginator sends it back: a token off the contract fails
                # this call here, in one line.
                token = answer.text("NextToken", None)
                if token and number >= MAX_PAGES:
                    raise AwsCallError(f"pricing:GetProducts: more than {MAX_PAGES} pages")
        return documents


def _document(text: str) -> Mapping[str, Any]:
    """One PriceList entry: a product's JSON document, as a string. One that is not is off the
    answer's contract: its call fails, rather than the product going unpriced unsaid."""
    try:
        product = json.loads(text)
    except ValueError:
        product = None
    if not isinstance(product, Mapping):
        raise OffContract(f"PriceList[]: expected a product's JSON document, got {text[:40]!r}")
    return product


def on_demand_hourly(document: str | Mapping[str, Any]) -> float | None:
    """The hourly USD price in one product's on-demand terms; None where it has none (or only
    a zero price, which is how reserved capacity lines read)."""
    return on_demand_price(document, HOURS)


def on_demand_price(document: str | Mapping[str, Any], unit: tuple[str, ...]) -> float | None:
    """The USD price per `unit` in one product's on-demand terms."""
    try:
        product = json.loads(document) if isinstance(document, str) else document
        terms = product.get("terms", {}).get("OnDemand") or {}
        dimensions = [d for t in terms.values() for d in (t.get("priceDimensions") or {}).values()]
    except (ValueError, AttributeError):
        return None  # not a product document: no price, never a guess
    found = []
    for dimension in dimensions:
        if not isinstance(dimension, Mapping) or dimension.get("unit") not in unit:
            continue
        try:
            usd = float(dimension.get("pricePerUnit", {}).get("USD", ""))
        except (ValueError, TypeError, AttributeError):
            continue
        if usd > 0:
            found.append(usd)
    return min(found) if found else None
