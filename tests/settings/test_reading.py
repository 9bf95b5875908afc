"""How CloudWatch's history is read."""

from structlog.testing import capture_logs

from analyzer import settings


def test_forecast_window_is_accepted_with_a_warning_that_names_where_it_was_set(
    tmp_path, monkeypatch
):
    path = tmp_path / "config.yaml"
    path.write_text("forecast_window: 1h\n")
    with capture_logs() as logs:
        assert settings.load({}, path).forecast_window == 3600
        monkeypatch.setenv("EBS_ANALYZER_FORECAST_WINDOW", "2h")
        settings.load({}, path)
    said = [e["setting"] for e in logs if e["event"] == "settings.ignored"]
    assert said == [f"{path}: forecast_window", "EBS_ANALYZER_FORECAST_WINDOW"]
