"""Configuration and rule files: refused in one line when too large, or when their aliases
expand past what any real file holds, before anything waits on them; and the one line every
refused document is explained in."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from analyzer import settings
from analyzer.analyze import rules
from analyzer.cli import main
from analyzer.errors import ConfigError
from analyzer.yamlfile import MAX_FILE_BYTES, MAX_NODES, dotted, explain, read_model, read_yaml

RULE = (
    "rules:\n  - id: mine\n    kind: iops_cap\n    resource_types: [volume]\n"
    "    severity: warning\n    utilization: 0.9\n"
)


def padded(head: str, size: int) -> str:
    """`head` and then YAML that would take seconds to parse, to `size` bytes in all."""
    filler = "".join(f"k{n}: [{n}, {n}]\n" for n in range(size // 10))
    return (head + "pad:\n" + filler.replace("k", "  k"))[:size]


def billion_laughs() -> str:
    """Under 1 KB, a thousand million strings once its aliases are followed."""
    nested = "&a0 [" + ", ".join(["lol"] * 10) + "]"
    for level in range(1, 9):
        nested = f"&a{level} [{nested}, " + ", ".join([f"*a{level - 1}"] * 9) + "]"
    return RULE.replace("resource_types: [volume]", f"resource_types: {nested}")


def test_a_2_mb_config_file_exits_2_with_one_line_before_it_is_parsed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(padded("region: [us-east-1]\n", 2 * 1024 * 1024))
    monkeypatch.setenv("EBS_ANALYZER_CONFIG", str(config))
    started = time.monotonic()
    assert main(["once"]) == 2
    assert time.monotonic() - started < 0.5
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert f"{config}: too large: 2,097,152 bytes, over the limit of 1,048,576 bytes" in err


def test_a_2_mb_rule_file_exits_2_with_one_line_before_it_is_parsed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "big.yaml").write_text(padded(RULE, 2 * 1024 * 1024))
    started = time.monotonic()
    assert main(["rules", "check", str(tmp_path)]) == 2
    assert time.monotonic() - started < 0.5
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "big.yaml: too large: 2,097,152 bytes, over the limit of 1,048,576 bytes" in err


def test_files_at_the_limit_load(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text("region: [us-east-1]\n# " + "x" * (MAX_FILE_BYTES - 23) + "\n")
    assert config.stat().st_size == MAX_FILE_BYTES
    assert settings.load({}, config).region == ("us-east-1",)
    rule_file = tmp_path / "mine.yaml"
    rule_file.write_text(RULE + "# " + "x" * (MAX_FILE_BYTES - len(RULE) - 4) + "\n")
    assert rule_file.stat().st_size == MAX_FILE_BYTES - 1
    assert [rule.id for rule in rules.parse_file(rule_file)] == ["mine"]


def test_a_device_that_never_ends_is_refused_after_the_limit() -> None:
    with pytest.raises(ConfigError, match="too large: more than 1,048,576 bytes"):
        read_yaml(Path("/dev/zero"))


def test_aliases_that_expand_to_a_billion_values_exit_2_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "laughs.yaml").write_text(billion_laughs())
    assert (tmp_path / "laughs.yaml").stat().st_size < 1000
    started = time.monotonic()
    assert main(["rules", "check", str(tmp_path)]) == 2
    assert time.monotonic() - started < 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert f"laughs.yaml: its aliases expand it to more than {MAX_NODES:,} values" in err


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("a: &x [1, *x]\n", "an alias refers to a value that holds it"),
        ("a: &x {b: *x}\n", "an alias refers to a value that holds it"),
        ("a: " + "[" * 5_000 + "\n", "invalid YAML: nested too deeply"),
        ("a: \x01\n", "invalid YAML: unacceptable character #x0001"),
    ],
)
def test_endless_and_too_deep_documents_are_one_line(
    tmp_path: Path, text: str, problem: str
) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as refused:
        read_yaml(path)
    assert str(refused.value).startswith(f"{path}: {problem}")
    assert "\n" not in str(refused.value)


def test_anchors_and_merge_keys_within_the_limits_still_work(tmp_path: Path) -> None:
    path = tmp_path / "mine.yaml"
    path.write_text(
        "base: &base {severity: warning, window: 15m}\n"
        "rules:\n  - {<<: *base, id: a}\n  - {<<: *base, id: b, window: 1h}\n"
    )
    assert read_yaml(path)["rules"] == [
        {"severity": "warning", "window": "15m", "id": "a"},
        {"severity": "warning", "window": "1h", "id": "b"},
    ]


class _Inner(BaseModel):
    model_config = ConfigDict(extra="forbid")
    size: int

    @field_validator("size")
    @classmethod
    def _positive(cls, size: int) -> int:
        if size <= 0:
            raise ValueError("must be > 0")
        return size


class _Outer(BaseModel):
    model_config = ConfigDict(extra="forbid")
    items: list[_Inner]


def _refusal(document: object) -> ValidationError:
    with pytest.raises(ValidationError) as caught:
        _Outer.model_validate(document)
    return caught.value


@pytest.mark.parametrize(
    ("location", "text"), [((), ""), (("items",), "items"), (("items", 0, "size"), "items.0.size")]
)
def test_a_location_reads_dotted(location: tuple[int | str, ...], text: str) -> None:
    assert dotted(location) == text


def test_each_problem_is_where_and_why_in_words_a_user_reads() -> None:
    error = _refusal({"items": [{"size": 0}, {"size": 1, "colour": "red"}], "x": 1})
    assert explain(error) == (
        "items.0.size: must be > 0; items.1.colour: unknown key; x: unknown key"
    )


def test_the_place_and_the_reasons_can_be_worded_by_the_caller() -> None:
    error = _refusal({"items": [{"size": 0}], "x": 1})

    def place(location: tuple[int | str, ...]) -> str:
        return "file: " + dotted(location)

    assert explain(error, place, {"extra_forbidden": "unknown setting"}) == (
        "file: items.0.size: must be > 0; file: x: unknown setting"
    )
    assert explain(error, place, first=True) == "file: items.0.size: must be > 0"


def test_a_problem_placed_nowhere_is_its_reason_alone(tmp_path: Path) -> None:
    assert explain(_refusal(None)) == "Input should be a valid dictionary or instance of _Outer"
    empty = tmp_path / "empty.yaml"
    empty.write_text("")
    with pytest.raises(ConfigError, match=r"^\S+empty.yaml: Input should be a valid dict"):
        read_model(empty, _Outer)
