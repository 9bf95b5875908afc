"""Reading an answer by its contract: a field of the wrong type names itself."""

from datetime import UTC, datetime

import pytest

from analyzer.collect.reply import OffContract, Reply


def test_fields_of_the_right_type_are_read_and_absent_ones_take_their_default():
    item = Reply(
        {"Id": "v", "Size": 8, "Rate": 2.5, "On": False, "At": datetime(2026, 1, 1, tzinfo=UTC)}
    )
    assert (item.text("Id"), item.integer("Size"), item.number("Rate")) == ("v", 8, 2.5)
    assert item.flag("On") is False
    assert item.moment("At").year == 2026
    assert (item.text("Nope", "dflt"), item.integer("Nope", None), item.number("Nope")) == (
        "dflt",
        None,
        None,
    )
    assert item.each("Nope") == [] and item.texts("Nope") == [] and item.member("Nope").empty


@pytest.mark.parametrize(
    ("raw", "read", "error"),
    [
        (
            {"Size": "8"},
            lambda r: r.integer("Size"),
            "Volumes[].Size: expected an integer, got str",
        ),
        ({"Size": True}, lambda r: r.integer("Size"), "Size: expected an integer, got bool True"),
        ({"Size": 8.5}, lambda r: r.integer("Size"), "Size: expected an integer, got float"),
        ({"Iops": "fast"}, lambda r: r.number("Iops"), "Iops: expected a finite number, got str"),
        ({"Iops": float("nan")}, lambda r: r.number("Iops"), "expected a finite number"),
        ({"Id": 5}, lambda r: r.text("Id"), "Volumes[].Id: expected a string, got int 5"),
        ({}, lambda r: r.text("Id"), "Volumes[].Id: missing"),
        ({"A": "x"}, lambda r: r.each("A"), "Volumes[].A: expected a list, got str 'x'"),
        ({"A": ["x"]}, lambda r: r.each("A"), "Volumes[].A[]: expected a structure, got str"),
        ({"A": [1]}, lambda r: r.texts("A"), "Volumes[].A[]: expected a string, got int 1"),
        ({"A": []}, lambda r: r.member("A"), "Volumes[].A: expected a structure, got list"),
        ({"V": [1, "2"]}, lambda r: r.numbers("V"), "Volumes[].V: expected finite numbers"),
        ({"V": [1, True]}, lambda r: r.numbers("V"), "got bool True"),
        ({"V": [10**400]}, lambda r: r.numbers("V"), "expected finite numbers"),
        ({"T": ["2026"]}, lambda r: r.moments("T"), "Volumes[].T: expected timestamps, got str"),
        ({"At": "now"}, lambda r: r.moment("At"), "Volumes[].At: expected a timestamp"),
    ],
)
def test_a_field_of_the_wrong_type_names_itself(raw, read, error):
    with pytest.raises(OffContract, match=None) as info:
        read(Reply(raw, "Volumes[]"))
    assert error in str(info.value)


def test_what_is_no_structure_is_off_contract_and_a_long_value_is_cut():
    with pytest.raises(OffContract, match="the answer: expected a structure, got str"):
        Reply("x" * 1_000)
    with pytest.raises(OffContract) as info:
        Reply({"Id": "y" * 1_000}).integer("Id")
    assert len(str(info.value)) < 100
