"""What `apply` may change, and how much a fix may add to the bill without saying so."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator

from analyzer.act.guards import Policy
from analyzer.settings.values import List, Seconds, tag_filters

APPLY_TAG = "ebs-analyzer/apply=allowed"
AUTOMATIC = ("gp2-to-gp3",)
"""The kinds of fix `apply_automatically` may name (`live/approvals.py` says what each is)."""


class Applying(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    apply_tag: str = APPLY_TAG
    """Key=Value: a resource carrying this tag may be changed by `apply`."""
    apply_scope: List = ()
    """Tag filters (Key=Value or Key) that widen the scope: a resource matching all of them
    may be changed too, tagged or not."""
    apply_max_monthly_increase: float = Field(default=50.0, ge=0)
    """A fix that adds more than this to the monthly bill (or whose price is unknown) is
    applied only with --allow-cost-increase."""

    apply_through_kubernetes: bool = False
    """Apply a claim's volume's fix through the Kubernetes API (patch the claim, create the
    VolumeAttributesClass), as the pod's service account or the kubeconfig's context; off: such
    a fix is refused with the kubectl commands that make it."""
    kubernetes_cluster: str | None = None
    """The cluster the analyzer changes claims in, as its volumes' tags name it: a claim of
    another cluster is refused."""
    apply_automatically: List = ()
    """Kinds of fix that go ahead without a click, within the same scope and guards, and are
    announced where alerts go: `gp2-to-gp3` (a gp2 volume moved to gp3, where gp3 costs no
    more and the replay of its past days limited nothing). Off by default."""
    apply_approvers: List = ()
    """Slack user ids (U0123…) whose click on an Apply button applies a fix; nobody's
    without them."""
    apply_wait: Seconds = Field(default=20.0, ge=0, le=600)
    """How long a fix applied from Slack is read back before its outcome is posted."""

    def apply_policy(self) -> Policy:
        """What `apply` may change, as its guards read it."""
        return Policy(self.apply_tag, self.apply_scope, self.apply_max_monthly_increase)

    @field_validator("apply_automatically")
    @classmethod
    def _kinds(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for item in value:
            if item not in AUTOMATIC:
                raise ValueError(
                    f"{item!r} is not a kind of fix applied automatically ({', '.join(AUTOMATIC)})"
                )
        return value

    @field_validator("apply_approvers")
    @classmethod
    def _approvers(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for item in value:
            if not item.isalnum() or not item[:1].isupper():
                raise ValueError(f"{item!r} is not a Slack user id (U0123ABCD)")
        return value

    @field_validator("apply_tag")
    @classmethod
    def _tag(cls, value: str) -> str:
        key, sep, tag_value = value.partition("=")
        if not key.strip() or not sep or not tag_value.strip():
            raise ValueError(f"{value!r} is not Key=Value")
        return value

    @field_validator("apply_scope")
    @classmethod
    def _scope(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        return tag_filters(value)
