import pytest

from analyzer.analyze.advice.sizing import nice_up


@pytest.mark.parametrize(
    ("need", "figure"),
    [(3_560, 3_600), (19_050, 19_500), (1_192, 1_200), (64_000, 64_000), (573, 580), (7, 7)],
)
def test_fixes_are_rounded_up_to_two_significant_figures(need, figure):
    assert nice_up(need) == figure
