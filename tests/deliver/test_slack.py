import json
from dataclasses import replace
from datetime import timedelta

from analyzer.analyze.advice.proof import proven
from analyzer.analyze.alerts import Alert, AlertBook, AlertState, Owed
from analyzer.deliver import slack
from analyzer.model.findings import Bottleneck, Finding, Severity
from analyzer.model.metrics import Measure
from analyzer.model.resources import ResourceRef, ResourceType
from analyzer.model.units import KIB, Unit
from tests.analyze.advice.test_proof import nightly
from tests.helpers import T0, analyze, assert_golden, series, volume_state


def book_with_alerts():
    shop = volume_state(
        "gp2",
        50,
        {
            Measure.IOPS: series([1_500] * 30),
            Measure.THROUGHPUT: series([1_500 * 4 * KIB] * 30),
            Measure.BURST_BALANCE: series([40.0] * 30),
        },
        volume_id="vol-shop",
        attached_to="i-shop",
    )
    empty = volume_state(
        "gp2",
        50,
        {
            Measure.IOPS: series([150] * 30),
            Measure.THROUGHPUT: series([150 * 4 * KIB] * 30),
            Measure.BURST_BALANCE: series([0.0] * 30),
        },
        volume_id="vol-db",
        attached_to="i-db",
    )
    analysis = analyze(shop, empty)
    snap, findings = analysis.snapshot, analysis.firing
    # The shop's fixes weighed on a fortnight of its nightly drain (`analyze/held.py`); the
    # other's past unread.
    findings = [
        proven(f, snap.get(f.resource.scope, "vol-shop"), nightly(1_500, 120))
        if f.resource.resource_id == "vol-shop"
        else f
        for f in findings
    ]
    book = AlertBook(4 * 3600, 300)
    book.update(snap.generated_at, findings, [])
    return book, snap.generated_at


def dump(message):
    return json.dumps(message, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def test_firing_message_is_golden():
    book, now = book_with_alerts()
    [(alerts, message)] = slack.messages(book.owed(), now)
    assert len(alerts) == 2
    assert_golden("slack_firing.json", dump(message))
    assert message["text"].startswith("2 storage bottlenecks on AWS: CRITICAL vol-db")


def test_resolved_message_is_golden():
    book, now = book_with_alerts()
    book.delivered(book.owed(), now)
    later = now + timedelta(hours=1, minutes=10)
    for alert in book:
        alert.state, alert.outbox = AlertState.RESOLVED, Owed.RESOLVED
    [(_, message)] = slack.messages(book.owed(), later)
    assert message["text"].startswith("Resolved")
    assert_golden("slack_resolved.json", dump(message))


def test_a_long_list_is_cut_to_what_slack_accepts():
    book, now = book_with_alerts()
    alerts = book.owed() * 30
    message = slack.firing_message(alerts, now)
    assert len(message["blocks"]) <= 50
    assert "…and 40 more" in json.dumps(message, ensure_ascii=False)


def test_rds_rates_read_in_the_unit_of_the_limit_that_binds():
    def alert(bottleneck, limit):
        finding = Finding(
            rule="r",
            severity=Severity.WARNING,
            resource=ResourceRef(ResourceType.DB_INSTANCE, "db", "us-east-1"),
            bottleneck=Bottleneck(bottleneck),
            summary="s",
            observed=limit,
            limit=limit,
            unit=Unit.BYTES_PER_SECOND,
        )
        return Alert(finding, AlertState.FIRING, T0, outbox=Owed.FIRING)

    now = T0 + timedelta(minutes=30)
    storage = slack.firing_message([alert("volume_throughput", 250 * 2**20)], now)
    klass = slack.firing_message([alert("instance_throughput", 593.75e6)], now)
    assert "*Limit:* 250 MiB/s" in json.dumps(storage)
    assert "*Limit:* 594 MB/s" in json.dumps(klass)


def test_a_claims_alerts_name_the_claim_first():
    from tests.helpers import as_claim

    book, now = book_with_alerts()
    for alert in book:
        if alert.resource_id == "vol-db":
            state = as_claim(volume_state(volume_id="vol-db", attached_to="i-db"))
            summary = "PVC db/data-postgres-0 (vol-db, gp2 50 GiB on i-db): burst credits exhausted"
            alert.finding = replace(alert.finding, resource=state.ref, summary=summary)
    [(_, message)] = slack.messages(book.owed(), now)
    assert message["text"].startswith(
        "2 storage bottlenecks on AWS: CRITICAL PVC db/data-postgres-0"
    )
    book.delivered(book.owed(), now)
    for alert in book:
        alert.state, alert.outbox = AlertState.RESOLVED, Owed.RESOLVED
    [(_, message)] = slack.messages(book.owed(), now + timedelta(hours=1))
    assert "volume-burst-credits-exhausted on PVC db/data-postgres-0 (vol-db)" in message["text"]
