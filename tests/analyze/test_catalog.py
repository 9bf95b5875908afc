"""The catalog prices from the price file first, then from AWS's offers, never by guess."""

from __future__ import annotations

import pytest

from analyzer.analyze import prices
from analyzer.analyze.catalog import Catalog, NoOffers


class Listed(NoOffers):
    def instance_hourly(self, instance_type, region):  # type: ignore[no-untyped-def]
        return {"m6in.12xlarge": 3.34152, "r6in.12xlarge": 4.18392}.get(instance_type)

    def db_storage_per_gib(self, storage_type, engine, region, multi_az):  # type: ignore[no-untyped-def]
        return 0.23 if multi_az else 0.115


def test_the_price_file_wins_over_the_price_list(tmp_path):
    path = tmp_path / "discounts.yaml"
    path.write_text("instances:\n  m6in.12xlarge: 2.00\n")
    catalog = Catalog(prices.load(path), Listed())
    assert catalog.instance_monthly("m6in.12xlarge", "us-east-1") == 1_460.00  # 730 h
    assert catalog.instance_monthly("r6in.12xlarge", "us-east-1") == pytest.approx(3_054.26)
    assert catalog.instance_monthly("x9.large", "us-east-1") is None


def test_rds_prices_multi_az_twice_and_no_guess_for_what_is_not_listed():
    demo = Catalog(prices.load(prices.DEMO))
    single = demo.db_monthly("db.r6g.2xlarge", "mysql", "us-east-1", multi_az=False)
    assert single == pytest.approx(0.899 * 730, abs=0.01)
    assert demo.db_monthly("db.r6g.2xlarge", "mysql", "us-east-1", multi_az=True) == (
        pytest.approx(2 * single, abs=0.01)
    )
    assert demo.db_monthly("db.r6g.2xlarge", "oracle-ee", "us-east-1", False) is None
    assert demo.db_storage_monthly("gp2", "mysql", "us-east-1", False, 200) == 23.00
    # From the Price List only the GiB-month is read: provisioned IOPS stay unpriced.
    api = Catalog(prices.load(), Listed())
    assert api.db_storage_monthly("gp3", "mysql", "us-east-1", True, 200) == 46.00
    assert api.db_storage_monthly("io1", "mysql", "us-east-1", False, 200, 1_000) is None
