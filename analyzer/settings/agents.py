"""What agents beside the workload publish, read in place of CloudWatch's AWS/EBS metrics:
the node agents' (through the Prometheus that scrapes them) and the CloudWatch agent's."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator


class Agents(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    node_coverage_url: str | None = None
    """The Prometheus that scrapes the node agents (its HTTP API base, `http://prometheus:9090`):
    asked each cycle which volumes a node read in the last three minutes, whose rates the
    daemon then leaves to the node (it still asks CloudWatch what only CloudWatch has). Unset:
    every volume from CloudWatch; Prometheus unreachable or answering off its contract: the
    same, warned."""
    cloudwatch_agent_namespace: str | None = Field(default=None, min_length=1, max_length=255)
    """Where the CloudWatch agent publishes its EBS NVMe metrics (`diskio_ebs_*`; the agent's
    default namespace is `CWAgent`): asked of ListMetrics at each inventory refresh, and read
    in place of a volume's AWS/EBS metrics where the agent publishes them. The same price per
    metric, and the exceeded checks in seconds of each minute, not just whether. Needs
    `cloudwatch:ListMetrics`. Unset: AWS/EBS only."""

    @field_validator("node_coverage_url")
    @classmethod
    def _prometheus(cls, value: str | None) -> str | None:
        if value is None:
            return None
        if not value.startswith(("http://", "https://")):
            raise ValueError(f"{value!r} is not an http:// or https:// URL")
        return value.rstrip("/")
