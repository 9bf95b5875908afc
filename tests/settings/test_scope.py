"""What is watched: a tag is Key=Value or a Key alone (a region, in test_regions.py)."""

import pytest

from analyzer import settings


@pytest.mark.parametrize(("tag", "read"), [("team=db", ("team=db",)), ("env", ("env",))])
def test_a_tag_is_key_value_or_a_key_alone(tag, read):
    assert settings.load({"tag": [tag]}).tag == read
