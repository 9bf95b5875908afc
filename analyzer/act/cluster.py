"""A claim's fix made through the Kubernetes API, never behind the claim's back: the
VolumeAttributesClass its target needs created, then the claim patched to name it (or to ask
for more storage); the EBS CSI driver then modifies the volume.

Through the official Kubernetes Python client (`kubernetes`, the `kubernetes` extra): in a
pod, its service account (`load_incluster_config`); on a terminal, the kubeconfig's current
context. A dry run is the API server's own (`dryRun=All`): admission and RBAC are checked,
nothing is stored.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Protocol

from analyzer.errors import ConfigError

VAC_GROUP = "storage.k8s.io"
VAC_VERSIONS = ("v1", "v1beta1")
"""GA from Kubernetes 1.34; beta from 1.31, behind the VolumeAttributesClass feature gate."""
VAC_PLURAL = "volumeattributesclasses"


class ClusterError(Exception):
    """The API server refused or could not be reached: `status` its HTTP status, 0 where it
    was not reached."""

    def __init__(self, message: str, status: int = 0) -> None:
        super().__init__(message)
        self.status = status


class Cluster(Protocol):
    """The two calls a claim's fix makes."""

    name: str | None
    """The cluster's name as volumes' tags give it; None where it is not known (then only a
    claim whose volume names no cluster is changed)."""

    def ensure_class(self, manifest: Mapping[str, Any], dry_run: bool) -> str:
        """Create the VolumeAttributesClass; `created`, or `exists` where one of its name is
        there already (a class is named for what it holds)."""
        ...

    def patch_claim(
        self, namespace: str, name: str, patch: Mapping[str, Any], dry_run: bool
    ) -> None: ...

    def claim_volume(self, namespace: str, name: str) -> str | None:
        """The EBS volume the claim is bound to (its PersistentVolume's CSI volume handle);
        None for a claim not bound, or not bound through the EBS CSI driver."""
        ...


class KubernetesCluster:
    """`Cluster` over the official client."""

    def __init__(self, api: Any, name: str | None = None) -> None:
        from kubernetes import client

        self.name = name
        self._core = client.CoreV1Api(api)
        self._custom = client.CustomObjectsApi(api)
        self._exception = client.exceptions.ApiException

    @classmethod
    def connect(cls, name: str | None = None) -> KubernetesCluster:
        """In a pod its service account, else the kubeconfig; ConfigError without either, or
        without the client installed."""
        try:
            from kubernetes import client, config
        except ImportError:
            raise ConfigError(
                "apply_through_kubernetes: the Kubernetes client is not installed: "
                "pip install 'ebs-bottleneck-analyzer[kubernetes]'"
            ) from None
        try:
            config.load_incluster_config()
        except config.ConfigException:
            try:
                config.load_kube_config()
            except (config.ConfigException, OSError) as exc:
                raise ConfigError(
                    f"apply_through_kubernetes: no service account and no kubeconfig: {exc}"
                ) from None
        return cls(client.ApiClient(), name)

    def ensure_class(self, manifest: Mapping[str, Any], dry_run: bool) -> str:
        for version in VAC_VERSIONS:
            body = {**manifest, "apiVersion": f"{VAC_GROUP}/{version}"}
            try:
                self._custom.create_cluster_custom_object(
                    VAC_GROUP, version, VAC_PLURAL, body, dry_run="All" if dry_run else None
                )
                return "created"
            except self._exception as exc:
                if exc.status == 409:
                    self._same_class(version, manifest)
                    return "exists"
                if exc.status == 404 and version != VAC_VERSIONS[-1]:
                    continue  # this version is not served: try the next
                what = f"create VolumeAttributesClass {manifest['metadata']['name']}"
                raise _said(exc, what) from None
            except Exception as exc:
                raise ClusterError(f"Kubernetes API: {type(exc).__name__}: {exc}") from None
        raise ClusterError("the cluster serves no VolumeAttributesClass API", 404)

    def _same_class(self, version: str, manifest: Mapping[str, Any]) -> None:
        """A class of the name that exists must hold what the fix was planned and priced for:
        a class is immutable, and one made by hand may hold anything."""
        name = manifest["metadata"]["name"]
        try:
            found = self._custom.get_cluster_custom_object(VAC_GROUP, version, VAC_PLURAL, name)
        except self._exception as exc:
            raise _said(exc, f"read VolumeAttributesClass {name}") from None
        held = (found.get("driverName"), found.get("parameters") or {})
        if held != (manifest["driverName"], dict(manifest["parameters"])):
            raise ClusterError(
                f"VolumeAttributesClass {name} exists with driver {held[0]} and parameters "
                f"{json.dumps(held[1], sort_keys=True)}, not the fix's "
                f"{json.dumps(dict(manifest['parameters']), sort_keys=True)}: nothing changed",
                409,
            )

    def claim_volume(self, namespace: str, name: str) -> str | None:
        try:
            claim = self._core.read_namespaced_persistent_volume_claim(name, namespace)
            bound = claim.spec.volume_name if claim.spec is not None else None
            if not bound:
                return None
            volume = self._core.read_persistent_volume(bound)
        except self._exception as exc:
            raise _said(exc, f"read PVC {namespace}/{name} and its volume") from None
        except Exception as exc:
            raise ClusterError(f"Kubernetes API: {type(exc).__name__}: {exc}") from None
        csi = volume.spec.csi if volume.spec is not None else None
        return str(csi.volume_handle) if csi is not None and csi.volume_handle else None

    def patch_claim(
        self, namespace: str, name: str, patch: Mapping[str, Any], dry_run: bool
    ) -> None:
        try:
            self._core.patch_namespaced_persistent_volume_claim(
                name, namespace, dict(patch), dry_run="All" if dry_run else None
            )
        except self._exception as exc:
            raise _said(exc, f"patch PVC {namespace}/{name}") from None
        except Exception as exc:
            raise ClusterError(f"Kubernetes API: {type(exc).__name__}: {exc}") from None


def _said(exc: Any, what: str) -> ClusterError:
    reason = str(getattr(exc, "reason", "") or "").strip()
    status = int(getattr(exc, "status", 0) or 0)
    hint = (
        ": grant the analyzer's service account the chart's apply.kubernetes Role"
        if status == 403
        else ""
    )
    return ClusterError(f"Kubernetes API: {what}: {status} {reason}{hint}", status)
