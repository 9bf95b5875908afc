"""Region names: a slip is named with a guess, a newer region is let through."""

from structlog.testing import capture_logs

from analyzer import settings


def test_a_well_formed_region_botocore_does_not_know_is_a_warning_with_a_guess() -> None:
    """A region newer than this botocore must still work; a slip is named."""
    with capture_logs() as logs:
        assert settings.load({"region": ["eu-centrl-1"]}).region == ("eu-centrl-1",)
    (said,) = [e for e in logs if e["event"] == "settings.region_unknown"]
    assert "did you mean 'eu-central-1'?" in said["reason"]
