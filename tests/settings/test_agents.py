"""The agents' metrics: the node agents' Prometheus, the CloudWatch agent's namespace."""

import pytest

from analyzer import settings
from analyzer.errors import ConfigError


def test_node_coverage_is_off_unless_a_prometheus_is_named(tmp_path, monkeypatch):
    assert settings.load().node_coverage_url is None
    path = tmp_path / "config.yaml"
    path.write_text("node_coverage_url: http://prometheus:9090/\n")
    assert settings.load({}, path).node_coverage_url == "http://prometheus:9090"
    monkeypatch.setenv("EBS_ANALYZER_NODE_COVERAGE_URL", "https://prom.example:443")
    assert settings.load({}, path).node_coverage_url == "https://prom.example:443"
    monkeypatch.setenv("EBS_ANALYZER_NODE_COVERAGE_URL", "prometheus:9090")
    with pytest.raises(ConfigError, match=r"EBS_ANALYZER_NODE_COVERAGE_URL.*not an http"):
        settings.load({}, path)


def test_the_cloudwatch_agent_is_read_only_where_its_namespace_is_named(monkeypatch):
    assert settings.load().cloudwatch_agent_namespace is None
    monkeypatch.setenv("EBS_ANALYZER_CLOUDWATCH_AGENT_NAMESPACE", "CWAgent")
    assert settings.load().cloudwatch_agent_namespace == "CWAgent"
    with pytest.raises(ConfigError, match="--cloudwatch-agent-namespace: String should have"):
        settings.load({"cloudwatch_agent_namespace": ""})
