"""AWS's offers as the analysis reads them: asked once, kept, and a failure answers nothing."""

from __future__ import annotations

from dataclasses import dataclass, field

from analyzer.collect.offers import AwsOffers
from analyzer.errors import AwsAccessError
from tests.fakes import M5, R5, FakeDescriber


@dataclass
class Counting(FakeDescriber):
    calls: list[str] = field(default_factory=list)
    fail: bool = False
    classes: set[str] = field(default_factory=set)

    def offered_instance_types(self):  # type: ignore[no-untyped-def]
        self.calls.append("types")
        if self.fail:
            raise AwsAccessError("ec2:DescribeInstanceTypes in us-east-1: AccessDenied: no")
        return [M5, R5]

    def orderable_db_classes(self, engine):  # type: ignore[no-untyped-def]
        self.calls.append(f"classes {engine}")
        return self.classes


def test_the_types_of_a_region_are_asked_for_once():
    describer = Counting()
    offers = AwsOffers(lambda region: describer, prices=None)
    assert [t.name for t in offers.instance_types("us-east-1")] == ["m5.large", "r5.xlarge"]
    assert len(offers.instance_types("us-east-1")) == 2
    assert describer.calls == ["types"]
    # Without the Price List, nothing is priced here (the price file may still be).
    assert offers.instance_hourly("m5.large", "us-east-1") is None


def test_a_failed_call_answers_nothing_and_is_tried_again_later():
    describer = Counting(fail=True)
    now = [0.0]
    offers = AwsOffers(lambda region: describer, prices=None, clock=lambda: now[0])
    assert offers.instance_types("us-east-1") == ()
    assert offers.instance_types("us-east-1") == ()
    assert describer.calls == ["types"]
    describer.fail, now[0] = False, 1_000.0
    assert len(offers.instance_types("us-east-1")) == 2


def test_an_engine_rds_lists_no_class_for_is_unknown_not_empty():
    describer = Counting()
    offers = AwsOffers(lambda region: describer, prices=None)
    assert offers.db_classes("mysql", "us-east-1") is None
    describer.classes = {"db.r6g.2xlarge"}
    assert offers.db_classes("postgres", "us-east-1") == {"db.r6g.2xlarge"}
