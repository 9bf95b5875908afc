"""The node agent: the EBS NVMe statistics of the volumes attached to this instance, read
every few seconds, and the daemon's analysis run on them."""
