"""The shipped prices are DOMAIN.md's us-east-1 figures."""

import pytest

from analyzer.analyze import prices
from analyzer.errors import ConfigError

LIST = prices.load()


@pytest.mark.parametrize(
    ("volume_type", "size", "iops", "mibps", "monthly"),
    [
        ("gp2", 50, None, None, 5.00),  # $0.10/GB
        ("gp3", 50, 3_000, 125, 4.00),  # $0.08/GB, 3,000 IOPS and 125 MiB/s included
        ("gp3", 2_000, 16_000, 1_000, 160 + 13_000 * 0.005 + 875 * 0.04),
        ("io1", 100, 5_000, None, 12.5 + 5_000 * 0.065),
        ("io2", 100, 32_000, None, 12.5 + 32_000 * 0.065),
        ("io2", 100, 40_000, None, 12.5 + 32_000 * 0.065 + 8_000 * 0.0455),
        ("io2", 100, 70_000, None, 12.5 + 32_000 * 0.065 + 32_000 * 0.0455 + 6_000 * 0.032),
        ("st1", 1_000, None, None, 45.00),
        ("sc1", 1_000, None, None, 15.00),
    ],
)
def test_monthly_prices(volume_type, size, iops, mibps, monthly):
    assert LIST.monthly(volume_type, size, iops, mibps) == pytest.approx(monthly, abs=0.005)


def test_a_type_without_a_price():
    assert LIST.monthly("standard", 100) is None


def test_a_users_price_file(tmp_path):
    path = tmp_path / "eu.yaml"
    path.write_text("currency: EUR\nvolumes:\n  gp2: {per_gib: 0.11}\n")
    eu = prices.load(path)
    assert eu.currency == "EUR"
    assert eu.monthly("gp2", 100) == 11.0


def test_a_broken_price_file_says_where(tmp_path):
    path = tmp_path / "p.yaml"
    path.write_text("volumes:\n  gp2: {per_gb: 0.11}\n")
    with pytest.raises(ConfigError, match=r"p.yaml: .*volumes.gp2.per_gb: unknown key"):
        prices.load(path)


def test_a_price_file_keeps_the_shipped_sections_it_leaves_out(tmp_path):
    path = tmp_path / "discounts.yaml"
    path.write_text("instances:\n  m6in.12xlarge: 2.10\n")
    listed = prices.load(path)
    assert listed.instances == {"m6in.12xlarge": 2.10}
    assert listed.monthly("gp2", 50) == 5.00  # the shipped EBS prices


def test_the_demo_snapshot_says_where_its_figures_come_from():
    demo = prices.load(prices.DEMO)
    assert "us-east-1" in demo.source and "2026" in demo.source
    assert demo.instances["m6in.12xlarge"] < demo.instances["r6in.12xlarge"]
