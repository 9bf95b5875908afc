"""Instance types fitted on the workload's own peaks before the few shown are chosen, through
moto: the CPU and the CloudWatch agent's memory of the last fourteen days, published hourly,
read by `once` (`Analyzer.proven`). A type with fewer vCPUs or less memory is offered where
the peaks fit it, with the figure; left out where they do not; and a cheap fit is not lost
behind three dearer types that do not fit.
"""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from analyzer import settings
from analyzer.analyze import prices, rules
from analyzer.live.cycle import Analyzer, CycleResult
from analyzer.model.units import KIB
from analyzer.sim.workloads import Demand, constant
from tests.account import Account
from tests.scenarios.test_priced_decisions import HOURS, SETTLE, START, finding


def fortnight(account: Account, instance: str, now: datetime, **published: float) -> None:
    """An instance's CPUUtilization (AWS/EC2) and the CloudWatch agent's mem_used_percent
    (CWAgent), every hour of the last fourteen days."""
    where = {"CPUUtilization": "AWS/EC2", "mem_used_percent": "CWAgent"}
    for name, value in published.items():
        items = [
            {
                "MetricName": name,
                "Dimensions": [{"Name": "InstanceId", "Value": instance}],
                "Timestamp": now - timedelta(hours=h),
                "Value": value,
            }
            for h in range(1, 14 * 24)
        ]
        for first in range(0, len(items), 500):
            account.cloudwatch.put_metric_data(
                Namespace=where[name], MetricData=items[first : first + 500]
            )


def proven(account: Account, now: datetime, price_file: str = str(prices.DEMO)) -> CycleResult:
    """`once`: the cycle, its fixes weighed on the fortnight before it."""
    config = settings.load({"region": [account.region], "prices": price_file, "pricing_api": False})
    analyzer = Analyzer(config, rules.load()).offering()
    return analyzer.proven(analyzer.run(now), now)


@pytest.mark.parametrize("used", [50.0, 80.0])
def test_incident_4_step_2_with_the_agent_s_memory_m6in_comes_first_where_it_fits(
    aws: None, used: float
) -> None:
    """Without the agent, m6in.12xlarge (192 GiB) comes after the types that keep today's
    256 GiB (`test_priced_decisions`); with it, as its figure says."""
    now = START + timedelta(minutes=60) + SETTLE
    account = Account()
    job = Demand(constant(60_000), io_size_bytes=112 * KIB, read_fraction=0.6)
    instance = account.instance("r6in.8xlarge")
    volume = account.volume("io2", 2_000, instance, Iops=32_000)
    account.put(account.simulation(instance, {volume: job}, START).run(60))
    fortnight(account, instance, now, CPUUtilization=40.0, mem_used_percent=used)
    cap = finding(proven(account, now), instance, "instance-throughput-cap")
    moves = [r for r in cap.remedies if len(r.changes) == 1]
    types = [r.change.after["instance_type"] for r in moves]
    if used == 50.0:
        # Half of 256 GiB: 128 GiB would be 67 % of m6in.12xlarge's 192; the cheapest.
        assert types[0] == "m6in.12xlarge"
        assert moves[0].action.endswith(
            "the most memory it used over the last 14 days, 128.0 GiB, would be 67 % of 192 GiB"
        )
    else:
        # 205 GiB would be 107 % of 192: left out.
        assert "m6in.12xlarge" not in types and types[0] == "r6in.12xlarge"


M5_PRICES = """\
source: us-east-1 Linux on-demand, shared tenancy, November 2026
currency: USD
region: us-east-1
instances:
  m5.8xlarge: 1.536
  m5.12xlarge: 2.304
  m6a.8xlarge: 1.3824
  m6i.8xlarge: 1.536
  r5b.4xlarge: 1.192
  r6in.4xlarge: 1.39464
  r6idn.4xlarge: 1.56312
"""


@pytest.mark.parametrize("cpu", [10.0, 75.0])
def test_an_m5_8xlarge_at_its_iops_cap_is_offered_half_the_vcpus_only_where_its_cpu_fits(
    aws: None, tmp_path, cpu: float
) -> None:  # type: ignore[no-untyped-def]
    """At m5.8xlarge's 30,000 EBS IOPS, 6-10 % CPU for a fortnight: the types with 16 vCPUs
    and the same 128 GiB carry its I/O for less; at 75 % they would not carry its CPU."""
    price_file = tmp_path / "prices.yaml"
    price_file.write_text(M5_PRICES)
    account = Account()
    instance = account.instance("m5.8xlarge")
    volume = account.volume("io2", 2_000, instance, Iops=40_000)
    job = Demand(constant(40_000), io_size_bytes=16 * KIB, read_fraction=0.6)
    account.put(account.simulation(instance, {volume: job}, START).run(60))
    now = START + timedelta(minutes=60) + SETTLE
    fortnight(account, instance, now, CPUUtilization=cpu)
    cap = finding(proven(account, now, str(price_file)), instance, "instance-iops-cap")
    moves = [r for r in cap.remedies if len(r.changes) == 1]
    vcpus = [r.change.after["vcpus"] for r in moves]
    types = [r.change.after["instance_type"] for r in moves]
    if cpu == 10.0:
        first = moves[0]
        assert first.change.after["instance_type"] == "r5b.4xlarge"  # the cheapest
        # Cheapest first, one a family, today's family's beside them.
        assert types == ["r5b.4xlarge", "m6a.8xlarge", "r6in.4xlarge", "m5.12xlarge"]
        assert first.action.endswith(
            "its peak CPU over the last 14 days, 10 % of 32 vCPUs, would be 20 % of 16"
        )
        assert first.monthly_delta == pytest.approx((1.192 - 1.536) * HOURS, abs=0.01)
    else:
        # 75 % of 32 would be 150 % of 16: only types that keep 32 vCPUs, not m5.12xlarge alone.
        assert min(vcpus) == 32
        assert types[0] == "m6a.8xlarge"
