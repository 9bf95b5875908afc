"""The label names /metrics and Alertmanager both use. An alert carries the labels of the
series of its resource, so a dashboard, a silence or an inhibition can match one with the
other; spelled here once, they cannot drift apart."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from analyzer.model.resources import ResourceType

REGION = "region"
ACCOUNT_ID = "account_id"
ACCOUNT_NAME = "account_name"
"""The account that owns a resource: on every series and alert where there are accounts."""
RESOURCE_TYPE = "resource_type"
RESOURCE_ID = "resource_id"
RULE = "rule"
SEVERITY = "severity"
BOTTLENECK = "bottleneck"
INSTANCE_ID = "instance_id"
"""An instance's id: the instance's own series, and a volume's the instance it is attached to."""

NAMESPACE = "namespace"
PERSISTENTVOLUMECLAIM = "persistentvolumeclaim"
KUBERNETES_CLUSTER = "kubernetes_cluster"
"""Beside the claim: the cluster its volume's tags name, so that two clusters' `db/data-0`
stay two (empty where the tags name none)."""
"""A claim's volume's namespace and claim, by kube-state-metrics' label names, so that
`kube_pod_spec_volumes_persistentvolumeclaims_info` joins on them: on the volume and finding
series where any volume has a claim (empty for the others), and on a claim's alerts."""

ID_LABELS: Mapping[ResourceType, str] = MappingProxyType(
    {
        ResourceType.VOLUME: "volume_id",
        ResourceType.INSTANCE: INSTANCE_ID,
        ResourceType.DB_INSTANCE: "db_instance_id",
    }
)
"""The label a resource's id goes by in its own series, by its type."""
