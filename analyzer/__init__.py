"""ebs-bottleneck-analyzer: warns before an EBS or EC2 storage limit holds a workload back."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("ebs-bottleneck-analyzer")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0.0.0"
