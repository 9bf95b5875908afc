"""The kinds of value settings take: lists and durations."""

import pytest

from analyzer import settings


def test_a_list_setting_is_a_yaml_list_or_text_with_commas(tmp_path, monkeypatch):
    path = tmp_path / "config.yaml"
    path.write_text("rules: [b, a]\nalertmanager_url: http://am:9093, http://am2:9093\n")
    loaded = settings.load({}, path)
    assert loaded.rules == ("b", "a")
    assert loaded.alertmanager_url == ("http://am:9093", "http://am2:9093")
    monkeypatch.setenv("EBS_ANALYZER_TAG", " team=db, ,env ")
    assert settings.load().tag == ("team=db", "env")


@pytest.mark.parametrize(
    ("name", "written", "seconds"),
    [("lookback", "1.5h", 5400), ("settle_delay", 90, 90), ("overlap", "500ms", 0.5)],
)
def test_a_duration_is_seconds_or_a_number_with_its_unit(name, written, seconds):
    assert getattr(settings.load({name: written}), name) == seconds
