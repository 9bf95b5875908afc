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
        'ebs_analyzer_cloudwatch_metrics_requested_total{tier="past"} 0.0',
    ):
        assert line in text


def test_the_cost_is_priced_on_the_analysis_clock_and_the_timestamp_on_real_time():
    """The demo's clock runs faster than real time: its month must be a simulated month, and
    the last success must compare with Prometheus's `time()`."""
    from datetime import UTC, datetime, timedelta

    from analyzer.model.state import FetchStats

    telemetry = Telemetry(CollectorRegistry(), wall_clock=lambda: 1_800_000_000.0)
    start = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)
    stats = FetchStats(metrics_requested=100, datapoints=1)
    stats.requests["success"] = 1
    # Three cycles a simulated minute apart, run within a fraction of a real second.
    for minute in range(3):
        telemetry.cycle_done(stats, 0.01, start + timedelta(minutes=minute), backfill=False)
    text = generate_latest(telemetry.registry).decode()
    # 200 metrics over 120 s of analysis time: 100 a minute, 4,320,000 a month at $0.01/1,000.
    assert "ebs_analyzer_cloudwatch_estimated_cost_dollars_per_month 43.2" in text
    assert "ebs_analyzer_last_successful_poll_timestamp_seconds 1.8e+09" in text


def test_the_past_s_metrics_are_billed_apart_and_do_not_hide_a_failed_poll():
    from datetime import UTC, datetime

    from analyzer.model.state import FetchStats

    telemetry = Telemetry(CollectorRegistry())
    # polling: full: every poll failed; the fortnights read to weigh fixes were answered.
    stats = FetchStats(metrics_requested=25, metrics_failed=25, past_requested=8)
    assert stats.outcome == "failed" and stats.billed == 33
    telemetry.cycle_done(stats, 0.01, datetime(2026, 11, 21, tzinfo=UTC), backfill=False)

    def sample(name, **labels):
        return telemetry.registry.get_sample_value(name, labels)

    metric = "ebs_analyzer_cloudwatch_metrics_requested_total"
    assert sample(metric, tier="full") == 25 and sample(metric, tier="past") == 8
    assert sample("ebs_analyzer_cycles_total", outcome="failed") == 1
