"""The label names /metrics and Alertmanager share: an alert's labels are those of its
resource's series, so one can be matched with the other."""

from __future__ import annotations

from prometheus_client.parser import text_string_to_metric_families

from analyzer.deliver import labels
from analyzer.deliver.alertmanager import labels_of
from analyzer.model.resources import ResourceType
from tests.deliver.test_exporter import exposition, published
from tests.fakes import reads


def test_every_resource_type_has_the_label_its_id_goes_by() -> None:
    assert set(labels.ID_LABELS) == set(ResourceType)
    assert labels.ID_LABELS[ResourceType.INSTANCE] == labels.INSTANCE_ID


def test_each_label_an_alert_carries_is_on_a_series_of_its_resource() -> None:
    current = published()
    alerts = current.firing
    assert alerts, "the published snapshot should hold a firing alert"
    series = [
        sample.labels
        for family in text_string_to_metric_families(exposition(current))
        for sample in family.samples
    ]
    for alert in alerts:
        for name, value in labels_of(alert, reads(*current.readings)).items():
            if name == "alertname":  # Alertmanager's own name for the rule
                continue
            assert any(s.get(name) == value for s in series), (name, value)


def test_a_claims_alert_carries_the_labels_of_its_series():
    from tests.deliver.test_exporter import claimed_published

    current = claimed_published()
    series = [
        sample.labels
        for family in text_string_to_metric_families(exposition(current))
        for sample in family.samples
    ]
    claimed = [a for a in current.firing if a.finding.resource.claim is not None]
    assert claimed
    for alert in claimed:
        found = labels_of(alert, reads(*current.readings))
        assert found[labels.NAMESPACE] == "db"
        assert found[labels.PERSISTENTVOLUMECLAIM] == "data-postgres-0"
        for name, value in found.items():
            if name != "alertname":
                assert any(s.get(name) == value for s in series), (name, value)
    unclaimed = [a for a in current.firing if a.finding.resource.claim is None]
    assert unclaimed
    assert all(labels.NAMESPACE not in labels_of(a, None) for a in unclaimed)
