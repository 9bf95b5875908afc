"""`backtest --tune` beside a plain `backtest` of the same fleet, in the same run.

    .venv/bin/python benchmarks/realload.py --cache /tmp/realload --record /tmp/realload.json.gz
    .venv/bin/python benchmarks/tune.py --from /tmp/realload.json.gz --volumes 100

The fleet: `--volumes` volumes, each on an instance of its own, their fortnights those of the
volumes in the recording taken in turn (the real-load benchmark's: every one of them drains
its bucket, the busiest a fleet can be; a copy is given its own ids). Both commands run as a
user runs them, one after the other, each timed by the wall clock and by the CPU its processes
used; the tune's shipped row is checked against the plain backtest's totals.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from analyzer.collect import recording
from analyzer.collect.recording import Recording
from analyzer.model.resources import Inventory

PROG = [sys.executable, "-m", "analyzer"]


def fleet(source: Recording, volumes: int) -> Recording:
    """`volumes` of the source's EC2 volumes in turn, each copy with its instance under ids of
    its own."""
    [(scope, inventory)] = source.inventories.items()
    instances = {i.instance_id: i for i in inventory.instances}
    pool = [v for v in inventory.volumes if v.attached_to in instances]
    if not pool:
        raise SystemExit(f"{scope}: no volume attached to an instance in the recording")
    kept_volumes, kept_instances, raw = [], [], {}
    for n in range(volumes):
        volume = pool[n % len(pool)]
        instance = instances[volume.attached_to or ""]
        vid, iid = f"{volume.volume_id}-{n:03d}", f"{instance.instance_id}-{n:03d}"
        kept_volumes.append(replace(volume, volume_id=vid, attached_to=iid))
        kept_instances.append(replace(instance, instance_id=iid, volume_ids=(vid,)))
        raw[vid] = source.raw[scope].get(volume.volume_id, {})
        raw[iid] = source.raw[scope].get(instance.instance_id, {})
    made = Inventory(inventory.region, tuple(kept_volumes), tuple(kept_instances))
    return Recording(source.start, source.end, {scope: made}, {scope: raw})


def timed(args: list[str]) -> tuple[dict[str, Any], float, float]:
    """The command's JSON, its wall seconds, and the CPU seconds of its processes."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    began = time.monotonic()
    done = subprocess.run([*PROG, *args], capture_output=True, text=True, check=False)
    wall = time.monotonic() - began
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(args)}: exit {done.returncode}: {done.stderr.strip()}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return json.loads(done.stdout), wall, cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--from", dest="source", required=True, help="a recording")
    parser.add_argument("--volumes", type=int, default=100)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()
    made = fleet(recording.read(Path(args.source)), args.volumes)
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "fleet.json.gz"
        recording.write(path, made)
        common = ["backtest", "--from", str(path), "--since", "14d", "--format", "json"]
        plain, plain_wall, plain_cpu = timed(common)
        tuned, tune_wall, tune_cpu = timed([*common, "--tune", "--jobs", str(args.jobs)])
    quality = plain["quality"]
    [shipped] = [row for row in tuned["tune"] if row["shipped"]]
    same = (
        shipped["exhaustions"] == quality["exhaustions"]
        and shipped["false_warnings"] == quality["false_warnings"]
        and shipped["median_lead_s"] == quality["median_lead_seconds"]
        and shipped["alarm_false_warnings"] == quality["alarm"]["false_episodes"]
    )
    settings = len(tuned["tune"])
    print(f"{args.volumes} volumes on as many instances, a fortnight, {os.cpu_count()} CPUs:")
    print(f"  backtest:         {plain_wall:7.0f} s wall, {plain_cpu:7.0f} s CPU")
    print(
        f"  backtest --tune:  {tune_wall:7.0f} s wall, {tune_cpu:7.0f} s CPU "
        f"({settings} settings, --jobs {args.jobs}): {tune_wall / plain_wall:.1f}× the wall, "
        f"{tune_cpu / plain_cpu:.1f}× the CPU"
    )
    print(f"  the shipped row equals the plain backtest's totals: {'yes' if same else 'NO'}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
