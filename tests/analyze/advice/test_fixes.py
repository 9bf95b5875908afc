from datetime import timedelta

from analyzer.analyze.kinds.credit_forecast import CreditForecast
from tests.helpers import fixes_of as fixes
from tests.helpers import steady_gp2 as gp2


def _modified(*modifications):
    from dataclasses import replace

    state = gp2(1_500, 40.0)
    return replace(state, resource=replace(state.resource, modifications=modifications))


def test_a_fix_says_a_modification_is_under_way():
    from analyzer.model.resources import Modification
    from tests.helpers import T0

    started = T0 - timedelta(minutes=20)
    state = _modified(Modification("optimizing", started, 40, "gp3 50 GiB 3,000 IOPS"))
    rule = CreditForecast(id="f", resource_types=["volume"], severity="warning")
    _, options = fixes(rule, state)
    assert all(
        "a modification is under way (optimizing, 40 %, to gp3 50 GiB 3,000 IOPS, since "
        in o.action
        for o in options
    )


def test_a_fix_says_when_the_days_modifications_are_spent():
    from analyzer.model.resources import Modification
    from tests.helpers import T0

    day = [Modification("completed", T0 - timedelta(hours=h), 100) for h in (1, 5, 9, 20)]
    rule = CreditForecast(id="f", resource_types=["volume"], severity="warning")
    _, options = fixes(rule, _modified(*day))
    assert all(
        "its 4 modifications in 24 h are spent: the next is possible from" in o.action
        for o in options
    )
    _, options = fixes(rule, _modified(*day[:3]))
    assert all("1 of its 4 modifications in 24 h left" in o.action for o in options)
