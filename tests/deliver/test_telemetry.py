from prometheus_client import CollectorRegistry, generate_latest

from analyzer.deliver.telemetry import Telemetry


def test_every_counter_series_is_there_at_zero_before_its_first_event():
    """`increase()` over a series that appears with its first event misses that event: an
    alert on the first failed delivery, or the first failed cycle, would never fire."""
    telemetry = Telemetry(CollectorRegistry())
    telemetry.expect_channel("slack")
    text = generate_latest(telemetry.registry).decode()
    for line in (
        'ebs_analyzer_cycles_total{outcome="failed"} 0.0',
        'ebs_analyzer_cycles_total{outcome="partial"} 0.0',
        'ebs_analyzer_cycles_total{outcome="success"} 0.0',
        'ebs_analyzer_inventory_refreshes_total{outcome="error"} 0.0',
        'ebs_analyzer_state_saves_total{outcome="error"} 0.0',
        'ebs_analyzer_notifications_total{channel="slack",outcome="error"} 0.0',
        'ebs_analyzer_cloudwatch_requests_total{operation="GetMetricData",outcome="error"} 0.0',
        'ebs_analyzer_cloudwatch_metrics_requested_total{tier="hot"} 0.0',
        'ebs_analyzer_cloudwatch_metrics_requested_total{tier="full"} 0.0',
    ):
        assert line in text
