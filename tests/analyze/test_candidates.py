"""Instance candidates: what fits, of each family its smallest size and its smallest that keeps
today's vCPUs and memory, cheapest first, marked where smaller."""

from __future__ import annotations

from analyzer.analyze.candidates import Wanted, candidates, less_than_today
from analyzer.model.resources import InstanceType
from analyzer.model.units import GIB, MB


def kind(name, mbps, memory_gib, vcpus, arch="x86_64", nitro=True, base=None):  # type: ignore[no-untyped-def]
    return InstanceType(
        name,
        baseline_iops=mbps * 32,
        maximum_iops=mbps * 32,
        baseline_throughput_bps=(base or mbps) * MB,
        maximum_throughput_bps=mbps * MB,
        memory_bytes=memory_gib * GIB,
        nitro=nitro,
        vcpus=vcpus,
        architectures=(arch,),
    )


TODAY = kind("r6in.8xlarge", 3_125, 256, 32)
OFFERED = [
    TODAY,
    kind("r6in.12xlarge", 4_687.5, 384, 48),
    kind("r6in.16xlarge", 6_250, 512, 64),
    kind("m6in.12xlarge", 4_687.5, 192, 48),
    kind("c6in.12xlarge", 4_687.5, 96, 48),
    kind("c7gn.8xlarge", 5_000, 64, 32, arch="arm64"),
    kind("m5.24xlarge", 2_375, 384, 96),  # too little EBS throughput
    kind("m5n.large", 4_750, 8, 2, base=81.25),  # bursts: its baseline is what lasts
    kind("x1.32xlarge", 4_750, 1_952, 128, nitro=False),
]
PRICES = {"r6in.12xlarge": 3_054.26, "m6in.12xlarge": 2_439.31, "c6in.12xlarge": 1_986.77}


def test_the_cheapest_that_carry_the_load_then_todays_family():
    wanted = Wanted(throughput_bps=3_670 * MB, nitro=True, architectures=frozenset({"x86_64"}))
    found = candidates(TODAY, OFFERED, wanted, PRICES.get)
    assert [c.name for c in found] == ["c6in.12xlarge", "m6in.12xlarge", "r6in.12xlarge"]
    assert [c.monthly for c in found] == [1_986.77, 2_439.31, 3_054.26]
    assert less_than_today(found[1].info, TODAY) == ["less memory"]
    assert less_than_today(found[2].info, TODAY) == []


def test_unpriced_types_come_last_and_todays_family_is_always_shown():
    found = candidates(TODAY, OFFERED, Wanted(throughput_bps=3_670 * MB), {}.get)
    assert "r6in.12xlarge" in [c.name for c in found]
    assert all(c.monthly is None for c in found)
    # Any architecture, and Xen allowed: the Graviton type and x1 may be named.
    anywhere = candidates(TODAY, OFFERED, Wanted(throughput_bps=3_670 * MB), PRICES.get)
    assert [c.name for c in anywhere][:3] == ["c6in.12xlarge", "m6in.12xlarge", "r6in.12xlarge"]


def test_nothing_fits_nothing_is_named():
    wanted = Wanted(throughput_bps=100_000 * MB)
    assert candidates(TODAY, OFFERED, wanted, PRICES.get) == []


def test_gpu_and_other_special_families_are_not_offered_for_ebs_bandwidth():
    offered = [
        *OFFERED,
        kind("p5.48xlarge", 10_000, 2_048, 192),
        kind("u-6tb1.56xlarge", 4_750, 6_144, 224),
    ]
    names = [c.name for c in candidates(TODAY, offered, Wanted(throughput_bps=3_670 * MB), {}.get)]
    assert "p5.48xlarge" not in names and "u-6tb1.56xlarge" not in names


def test_every_type_that_carries_the_load_is_returned_for_the_fit_to_choose_from():
    """Not cut to the three shown: which are shown depends on the workload's peaks."""
    many = [kind(f"x{n}in.12xlarge", 4_687.5, 128, 48) for n in range(2, 9)]
    prices = {k.name: 1_000.0 + n for n, k in enumerate(many)}
    found = candidates(TODAY, [TODAY, *many], Wanted(throughput_bps=3_670 * MB), prices.get)
    assert [c.name for c in found] == [k.name for k in many]


def test_a_family_s_larger_size_that_keeps_today_s_vcpus_and_memory_stands_beside_its_smallest():
    today = kind("m5.8xlarge", 850, 128, 32)
    r5b = [kind("r5b.4xlarge", 1_250, 128, 16), kind("r5b.8xlarge", 2_500, 256, 32)]
    found = candidates(today, [today, *r5b], Wanted(throughput_bps=1_000 * MB), {}.get)
    assert [c.name for c in found] == ["r5b.4xlarge", "r5b.8xlarge"]
    assert less_than_today(found[0].info, today) == ["fewer vCPUs"]
    # Where the smallest keeps both already, it is the family's only one.
    found = candidates(today, [today, *r5b], Wanted(throughput_bps=2_000 * MB), {}.get)
    assert [c.name for c in found] == ["r5b.8xlarge"]
