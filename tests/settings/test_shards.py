"""This process's shard: given, or the StatefulSet pod's ordinal."""

import pytest

from analyzer import settings
from analyzer.errors import ConfigError


def test_one_shard_is_the_whole_and_a_shard_names_its_part(monkeypatch):
    from analyzer.collect.shards import WHOLE, Shard

    assert settings.load().sharding() is WHOLE
    assert settings.load({"shard": 2, "total_shards": 3}).sharding() == Shard(2, 3)
    monkeypatch.setenv("EBS_ANALYZER_TOTAL_SHARDS", "4")
    monkeypatch.setenv("POD_NAME", "ebs-analyzer-3")
    assert settings.load().sharding() == Shard(3, 4)


def test_a_shard_beyond_the_total_or_no_ordinal_is_one_line(monkeypatch):
    with pytest.raises(ConfigError, match=r"shard \(3\) must be below total_shards \(3\)"):
        settings.load({"shard": 3, "total_shards": 3})
    monkeypatch.setenv("POD_NAME", "analyzer")
    with pytest.raises(ConfigError, match="ends in no StatefulSet ordinal below it: set --shard"):
        settings.load({"total_shards": 2}).sharding()
