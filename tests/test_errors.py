"""The errors that end a command, with the exit codes the README documents: 2 for invalid
configuration or rule files, 3 for AWS unreachable or refusing access."""

from __future__ import annotations

import pytest

from analyzer.errors import AnalyzerError, AwsAccessError, AwsCallError, ConfigError


@pytest.mark.parametrize(
    ("error", "code"),
    [
        (AnalyzerError("failed"), 1),
        (ConfigError("rules.yaml: rule 'x': unknown kind"), 2),
        (AwsAccessError("DescribeVolumes: AccessDenied", "AccessDenied"), 3),
        (AwsCallError("GetMetricData: Throttling", "Throttling"), 3),
    ],
)
def test_each_error_ends_the_command_with_its_documented_code(error, code):
    assert error.exit_code == code
    # One handler catches them all and exits with the error's own code.
    with pytest.raises(AnalyzerError) as raised:
        raise error
    assert raised.value.exit_code == code


def test_the_message_is_the_one_line_printed():
    assert str(ConfigError("rules.yaml: rule 'x': unknown kind")) == (
        "rules.yaml: rule 'x': unknown kind"
    )


@pytest.mark.parametrize("error_type", [AwsAccessError, AwsCallError])
def test_an_aws_error_keeps_awss_code_where_aws_answered(error_type):
    answered = error_type("DescribeVolumes: not authorized", "UnauthorizedOperation")
    assert answered.code == "UnauthorizedOperation"
    assert str(answered) == "DescribeVolumes: not authorized"
    unreachable = error_type("DescribeVolumes: could not connect")
    assert unreachable.code is None
