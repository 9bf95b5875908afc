"""The Price List Query API adapter against answers in the API's documented shape (moto has
no Pricing API): botocore's Stubber checks each request against the service model."""

from __future__ import annotations

import json

import boto3
import pytest
from botocore.stub import Stubber

from analyzer.collect.pricing import OnDemandPrices, on_demand_hourly


def product(usd: str, unit: str = "Hrs", sku: str = "ABCDEFGH") -> str:
    """One PriceList entry as GetProducts returns it: a JSON document, as a string."""
    return json.dumps(
        {
            "product": {"sku": sku, "attributes": {"instanceType": "m6in.12xlarge"}},
            "terms": {
                "OnDemand": {
                    f"{sku}.JRTCKXETXF": {
                        "priceDimensions": {
                            f"{sku}.JRTCKXETXF.6YS6EN2CT7": {
                                "unit": unit,
                                "pricePerUnit": {"USD": usd},
                                "description": f"${usd} per On Demand Linux m6in.12xlarge",
                            }
                        },
                        "sku": sku,
                    }
                }
            },
        }
    )


def request(service: str, filters: dict[str, str]) -> dict[str, object]:
    """The GetProducts request the adapter must make: one TERM_MATCH filter a field."""
    return {
        "ServiceCode": service,
        "Filters": [{"Type": "TERM_MATCH", "Field": k, "Value": v} for k, v in filters.items()],
        "FormatVersion": "aws_v1",
    }


def ec2_request(instance_type: str) -> dict[str, object]:
    """Linux, shared tenancy, no pre-installed software, in us-east-1."""
    return request(
        "AmazonEC2",
        {
            "instanceType": instance_type,
            "regionCode": "us-east-1",
            "operatingSystem": "Linux",
            "tenancy": "Shared",
            "preInstalledSw": "NA",
            "capacitystatus": "Used",
        },
    )


@pytest.fixture
def stubbed():
    client = boto3.client("pricing", region_name="us-east-1")
    with Stubber(client) as stubber:
        yield client, stubber
        stubber.assert_no_pending_responses()


def test_an_instance_price_is_read_once_and_kept(stubbed) -> None:
    client, stubber = stubbed
    # A zero-priced line (reserved capacity) beside the real one: the real one is the price.
    stubber.add_response(
        "get_products",
        {
            "PriceList": [product("0.0000000000", sku="RESERVED"), product("3.6385000000")],
            "FormatVersion": "aws_v1",
        },
        ec2_request("m6in.12xlarge"),
    )
    prices = OnDemandPrices(client)
    assert prices.instance_hourly("m6in.12xlarge", "us-east-1") == pytest.approx(3.6385)
    assert prices.instance_hourly("m6in.12xlarge", "us-east-1") == pytest.approx(3.6385)


def test_pages_are_followed(stubbed) -> None:
    """Every page's products count: the cheapest on-demand line may come on any of them."""
    client, stubber = stubbed
    params = ec2_request("r6in.12xlarge")
    stubber.add_response("get_products", {"PriceList": [], "NextToken": "t1"}, params)
    stubber.add_response(
        "get_products",
        {"PriceList": [product("4.5000000000", sku="DEDICATED")], "NextToken": "t2"},
        {**params, "NextToken": "t1"},
    )
    stubber.add_response(
        "get_products", {"PriceList": [product("4.1851200000")]}, {**params, "NextToken": "t2"}
    )
    assert OnDemandPrices(client).instance_hourly("r6in.12xlarge", "us-east-1") == pytest.approx(
        4.18512
    )


def test_an_endless_run_of_pages_is_a_failed_lookup(monkeypatch) -> None:
    from structlog.testing import capture_logs

    from analyzer.collect import pricing

    monkeypatch.setattr(pricing, "MAX_PAGES", 3)
    pages = [{"PriceList": [], "NextToken": f"t{n}"} for n in range(10)]
    client = answering(*pages)
    with capture_logs() as logs:
        assert (
            OnDemandPrices(client, clock=lambda: 0.0).instance_hourly("m5.large", "us-east-1")
            is None
        )
    [event] = logs
    assert event["event"] == "pricing.failed" and "more than 3 pages" in event["error"]


def test_an_rds_class_price_for_an_open_source_engine(stubbed) -> None:
    client, stubber = stubbed
    filters = {
        "instanceType": "db.r6g.2xlarge",
        "regionCode": "eu-west-1",
        "databaseEngine": "MySQL",
        "deploymentOption": "Multi-AZ",
    }
    stubber.add_response(
        "get_products",
        {"PriceList": [product("1.9520000000")]},
        request("AmazonRDS", filters),
    )
    prices = OnDemandPrices(client)
    assert prices.db_class_hourly("db.r6g.2xlarge", "mysql", "eu-west-1", multi_az=True) == 1.952
    # Oracle's price depends on its edition and licence: unpriced, never guessed (no call).
    assert prices.db_class_hourly("db.r6i.2xlarge", "oracle-ee", "eu-west-1") is None


def test_no_product_is_no_price_and_access_denied_stops_asking(stubbed) -> None:
    client, stubber = stubbed
    stubber.add_response("get_products", {"PriceList": []})
    stubber.add_client_error("get_products", "AccessDeniedException", "not allowed")
    prices = OnDemandPrices(client)
    assert prices.instance_hourly("x9.large", "us-east-1") is None
    assert prices.instance_hourly("m5.large", "us-east-1") is None
    assert prices.instance_hourly("m5.xlarge", "us-east-1") is None  # not asked again


@pytest.mark.parametrize(
    "document",
    ["not json", json.dumps({"terms": "oops"}), product("n/a"), product("1.0", unit="Quantity")],
)
def test_a_document_without_an_hourly_price_has_none(document) -> None:
    assert on_demand_hourly(document) is None


def test_rds_storage_is_priced_per_gb_month(stubbed) -> None:
    client, stubber = stubbed
    filters = {
        "productFamily": "Database Storage",
        "volumeType": "General Purpose",
        "regionCode": "us-east-1",
        "databaseEngine": "MySQL",
        "deploymentOption": "Single-AZ",
    }
    stubber.add_response(
        "get_products",
        {"PriceList": [product("0.1150000000", unit="GB-Mo")]},
        request("AmazonRDS", filters),
    )
    prices = OnDemandPrices(client)
    assert prices.db_storage_per_gib("gp2", "mysql", "us-east-1") == pytest.approx(0.115)
    assert prices.db_storage_per_gib("magnetic", "mysql", "us-east-1") is None  # no call


def test_a_failed_lookup_is_tried_again_only_after_a_while(stubbed) -> None:
    client, stubber = stubbed
    now = [0.0]
    stubber.add_client_error("get_products", "ThrottlingException", "slow down")
    stubber.add_response("get_products", {"PriceList": [product("0.0960000000")]})
    prices = OnDemandPrices(client, clock=lambda: now[0])
    assert prices.instance_hourly("m5.large", "us-east-1") is None
    now[0] = 60.0
    assert prices.instance_hourly("m5.large", "us-east-1") is None  # not asked: too soon
    now[0] = 901.0
    assert prices.instance_hourly("m5.large", "us-east-1") == pytest.approx(0.096)


def test_an_unreachable_price_list_is_tried_again_and_said_once_an_outage(stubbed) -> None:
    """A network blip is not a refusal: pricing comes back after it, and one line says so."""
    from unittest.mock import patch

    from botocore.exceptions import EndpointConnectionError
    from structlog.testing import capture_logs

    client, stubber = stubbed
    now = [0.0]
    prices = OnDemandPrices(client, clock=lambda: now[0])
    blip = EndpointConnectionError(endpoint_url="https://api.pricing.us-east-1.amazonaws.com")
    with capture_logs() as logs, patch.object(client, "get_products", side_effect=blip):
        assert prices.instance_hourly("m5.large", "us-east-1") is None
        assert prices.instance_hourly("m5.xlarge", "us-east-1") is None
    assert [e["event"] for e in logs] == ["pricing.failed"]
    now[0] = 1_000.0
    stubber.add_response("get_products", {"PriceList": [product("0.0960000000")]})
    assert prices.instance_hourly("m5.large", "us-east-1") == pytest.approx(0.096)


def answering(*pages: object):
    """A pricing client whose GetProducts answers `pages` as they are, one a call, through
    botocore's own call path and paginator: Stubber would refuse an answer off the contract."""
    from botocore.awsrequest import AWSResponse

    client = boto3.client("pricing", region_name="us-east-1")
    answers = iter(pages)
    client.meta.events.register(
        "before-call.pricing.GetProducts",
        lambda **_: (AWSResponse("https://pricing", 200, {}, None), next(answers)),
    )
    return client


@pytest.mark.parametrize(
    ("page", "why"),
    [
        ({"PriceList": "[]"}, "PriceList: expected a list, got str"),
        ({"PriceList": [{"terms": {}}]}, "PriceList[]: expected a string, got dict"),
        ({"PriceList": ["not json"]}, "PriceList[]: expected a product's JSON document"),
        ({"PriceList": ["[1, 2]"]}, "PriceList[]: expected a product's JSON document"),
        ({"PriceList": [product("0.096")], "NextToken": 2}, "NextToken: expected a string"),
        (["PriceList"], "the answer: expected a structure, got list"),
    ],
)
def test_an_answer_off_the_contract_is_a_failed_lookup_said_in_one_line(page, why) -> None:
    """Not "no price" unsaid: the call failed, and it is logged and asked again later."""
    from structlog.testing import capture_logs

    prices = OnDemandPrices(answering(page), clock=lambda: 0.0)
    with capture_logs() as logs:
        assert prices.instance_hourly("m5.large", "us-east-1") is None
    [event] = logs
    assert event["event"] == "pricing.failed"
    assert event["error"].startswith("pricing:GetProducts in us-east-1: malformed answer: ")
    assert why in event["error"] and "\n" not in event["error"]
