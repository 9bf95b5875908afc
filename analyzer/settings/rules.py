"""Where the rules are read from."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict

from analyzer.settings.values import List


class Rules(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    rules: List = ()
    """Rule directories, in order; empty means the shipped rules."""

    @property
    def rule_dirs(self) -> list[Path]:
        return [Path(p) for p in self.rules]
