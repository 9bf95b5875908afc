"""How CloudWatch's history is read: how far back at first, and which newest minutes not yet."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from analyzer.settings.values import Seconds

PUBLICATION_LAG_S = 120.0
"""One-minute CloudWatch metrics are available about two minutes after their minute ends
(Datadog, "Cloud Metric Delay": docs.datadoghq.com/integrations/guide/cloud-metric-delay/);
AWS publishes no figure. The same two minutes as the settle delay DOMAIN.md recommends."""


class Reading(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    lookback: Seconds | None = Field(default=None, gt=0, le=15 * 86400.0)
    """History fetched on the first cycle, so that it can already forecast, and kept. Unset:
    what the rules read, plus ten minutes (40 minutes with the shipped rules); never less."""
    settle_delay: Seconds = Field(default=120.0, ge=0, le=3600.0)
    """A sum's newest minute may still be filling in CloudWatch: it is read once the next
    minute is there, or this long after it ends. (A gauge is read as soon as it is there.)"""
    publication_lag: Seconds = Field(default=PUBLICATION_LAG_S, ge=0, le=3600.0)
    """How long after a minute ends CloudWatch has published its datapoint. `backtest` reads
    each minute no earlier than this after it ends, as the daemon reads it, and the alarm it
    is compared with sees it then too."""
    forecast_window: Seconds | None = None
    """No longer used, and accepted with a warning: every output reads one time to empty per
    resource, over the `rate_window` of the `credit_forecast` rule that applies to it."""
