"""On-demand prices from the AWS Price List Query API (`pricing:GetProducts`).

The API is served from a few regions (us-east-1 among them) for every region's prices. Each
product comes back as a JSON document; its `terms.OnDemand` holds the hourly USD price. One
lookup per instance type or RDS class and region, kept for the life of the process; a price
that cannot be found, or a call that fails, is None, never a guess (DOMAIN.md).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import structlog

from analyzer.collect.aws import calling
from analyzer.errors import AwsAccessError, AwsCallError

log = structlog.get_logger(__name__)

PRICING_REGION = "us-east-1"
"""Where the Price List Query API answers for every region's prices."""
HOURS_PER_MONTH = 730.0
MAX_PAGES = 20
ENGINES = {"mysql": "MySQL", "postgres": "PostgreSQL", "mariadb": "MariaDB"}
"""RDS engines priced here: the open-source ones. Oracle, SQL Server and Db2 prices depend
on edition and licence model: unpriced rather than guessed."""

Key = tuple[str, ...]


class OnDemandPrices:
    """Hourly on-demand USD prices. `client` is a boto3 `pricing` client (or a stand-in with
    the same `get_products`)."""

    def __init__(self, client: Any) -> None:
        self._client = client
        self._known: dict[Key, float | None] = {}
        self._denied = False

    def instance_hourly(self, instance_type: str, region: str) -> float | None:
        """Linux, shared tenancy, no pre-installed software: what the instance costs alone."""
        return self._hourly(
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
        return self._hourly(
            "AmazonRDS",
            {
                "instanceType": instance_class,
                "regionCode": region,
                "databaseEngine": database,
                "deploymentOption": "Multi-AZ" if multi_az else "Single-AZ",
            },
        )

    def _hourly(self, service: str, filters: Mapping[str, str]) -> float | None:
        key = (service, *sorted(f"{k}={v}" for k, v in filters.items()))
        if key in self._known:
            return self._known[key]
        if self._denied:
            return None
        try:
            documents = self._products(service, filters)
        except AwsAccessError as exc:
            self._denied = True
            log.warning("pricing.skipped", error=str(exc))
            return None
        except AwsCallError as exc:
            log.warning("pricing.failed", error=str(exc))
            return None  # not kept: the next lookup tries again
        prices = [p for d in documents if (p := on_demand_hourly(d)) is not None]
        found = min(prices) if prices else None
        self._known[key] = found
        return found

    def _products(self, service: str, filters: Mapping[str, str]) -> list[str]:
        kwargs: dict[str, Any] = {
            "ServiceCode": service,
            "Filters": [
                {"Type": "TERM_MATCH", "Field": field, "Value": value}
                for field, value in filters.items()
            ],
            "FormatVersion": "aws_v1",
        }
        documents: list[str] = []
        for _ in range(MAX_PAGES):
            with calling("pricing:GetProducts", PRICING_REGION):
                page = self._client.get_products(**kwargs)
                documents += list(page.get("PriceList", []))
                token = page.get("NextToken")
            if not token:
                return documents
            kwargs["NextToken"] = token
        raise AwsCallError(f"pricing:GetProducts: more than {MAX_PAGES} pages")


def on_demand_hourly(document: str | Mapping[str, Any]) -> float | None:
    """The hourly USD price in one product's on-demand terms; None where it has none (or only
    a zero price, which is how reserved capacity lines read)."""
    try:
        product = json.loads(document) if isinstance(document, str) else document
        terms = product.get("terms", {}).get("OnDemand") or {}
        dimensions = [d for t in terms.values() for d in (t.get("priceDimensions") or {}).values()]
    except (ValueError, AttributeError):
        return None  # not a product document: no price, never a guess
    found = []
    for dimension in dimensions:
        if not isinstance(dimension, Mapping) or dimension.get("unit") not in ("Hrs", "Hours"):
            continue
        try:
            usd = float(dimension.get("pricePerUnit", {}).get("USD", ""))
        except (ValueError, TypeError, AttributeError):
            continue
        if usd > 0:
            found.append(usd)
    return min(found) if found else None
