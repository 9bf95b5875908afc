from datetime import UTC, datetime

import pytest
from botocore.exceptions import ClientError, EndpointConnectionError, NoCredentialsError

from analyzer.collect import aws
from analyzer.collect.aws import calling, client_config
from analyzer.errors import AwsAccessError, AwsCallError


def client_error(code: str, message: str = "nope") -> ClientError:
    return ClientError({"Error": {"Code": code, "Message": message}}, "DescribeVolumes")


GRANT = "grant ec2:DescribeVolumes to this identity (every action it calls: deploy/iam-policy"


@pytest.mark.parametrize(
    ("code", "step"),
    [
        ("AccessDenied", GRANT),
        ("UnauthorizedOperation", GRANT),
        ("AuthFailure", "AWS does not know these credentials"),
        ("ExpiredToken", "the session's credentials have expired"),
        ("InvalidClientTokenId", "AWS does not know these credentials"),
        ("SignatureDoesNotMatch", "check AWS_SECRET_ACCESS_KEY"),
        ("OptInRequired", "the region is not enabled for this account"),
    ],
)
def test_access_errors_are_fatal_name_the_call_and_say_what_to_do(code, step):
    with pytest.raises(AwsAccessError) as info, calling("ec2:DescribeVolumes", "us-east-1"):
        raise client_error(code, "You are not authorized")
    said = str(info.value)
    assert said.startswith(f"ec2:DescribeVolumes in us-east-1: {code}: You are not authorized: ")
    assert step in said and "\n" not in said


def test_no_credentials_names_the_variables_and_the_policy():
    with pytest.raises(AwsAccessError) as info, calling("ec2:DescribeVolumes", "us-east-1"):
        raise NoCredentialsError()
    assert str(info.value) == (
        "ec2:DescribeVolumes in us-east-1: Unable to locate credentials: set AWS_PROFILE, or "
        "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or run with an instance or pod role; the "
        "permissions it needs are in deploy/iam-policy.json, or `ebs-analyzer iam-policy`"
    )


def test_unreachable_endpoint_is_an_access_error():
    with pytest.raises(AwsAccessError, match="Could not connect"), calling("x:Y", "eu-west-1"):
        raise EndpointConnectionError(endpoint_url="https://ec2.eu-west-1.amazonaws.com")


def test_other_failures_may_pass():
    with pytest.raises(AwsCallError) as info, calling("cloudwatch:GetMetricData", "us-east-1"):
        raise client_error("Throttling", "Rate exceeded")
    assert info.value.code == "Throttling"


def test_retries_are_standard_unless_the_user_chose(monkeypatch):
    assert client_config().retries == {"mode": "standard", "max_attempts": 3}
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "2")
    assert client_config().retries is None


def test_the_region_comes_from_aws_region_first(monkeypatch):
    from analyzer.collect.aws import default_region

    monkeypatch.delenv("AWS_DEFAULT_REGION")
    assert default_region() is None
    monkeypatch.setenv("AWS_REGION", "eu-west-1")  # what a container or an EKS pod is given
    assert default_region() == "eu-west-1"
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-2")
    assert default_region() == "eu-west-1"  # as the SDKs and the AWS CLI rank them
    monkeypatch.delenv("AWS_REGION")
    assert default_region() == "us-east-2"


def test_an_aws_error_is_one_line_with_credentials_redacted():
    """SignatureDoesNotMatch echoes the canonical request, session token included."""
    from botocore.exceptions import ClientError

    from analyzer.collect.aws import error_text

    token = "IQoJb3JpZ2luX2VjEJr//////////wEaCXVzLWVhc3QtMSJHMEUCIQDexample+token/value="
    message = (
        "The request signature we calculated does not match the signature you provided. "
        "Credential=ASIAEXAMPLEEXAMPLE12/20261123/us-east-1/monitoring/aws4_request\n\n"
        "The Canonical String for this request should have been\n'POST\n/\n\n"
        f"x-amz-security-token:{token}\n'"
    )
    exc = ClientError(
        {"Error": {"Code": "SignatureDoesNotMatch", "Message": message}}, "GetMetricData"
    )
    text = error_text(exc)
    assert "\n" not in text
    assert text.startswith("SignatureDoesNotMatch: The request signature we calculated")
    assert "ASIAEXAMPLEEXAMPLE12" not in text and token not in text
    assert "[redacted]" in text
    assert (
        len(error_text(ClientError({"Error": {"Code": "X", "Message": "why " * 250}}, "Op"))) <= 300
    )


def test_sessions_of_every_region_share_the_service_models_parsed_once() -> None:
    one, other = aws.session("us-east-1"), aws.session("eu-west-1")
    loaders = [s._session.get_component("data_loader") for s in (one, other)]
    assert loaders[0] is loaders[1]
    assert one._session is not other._session  # each its own credentials and region


def test_a_moment_is_one_datetime_shared_and_a_fortnight_leaves_only_a_day_kept() -> None:
    minute = 1_795_000_020
    first, again = aws.utc_timestamp(minute), aws.utc_timestamp(minute)
    assert first is again and first == datetime.fromtimestamp(minute, UTC)
    # A fortnight of minutes, oldest first, as a weighing reads it: the newest day stays
    # shared for the polls, the rest is let go of.
    fortnight = [minute + 60 * i for i in range(14 * 1440)]
    parsed = [aws.utc_timestamp(t) for t in fortnight]
    assert aws._epoch.cache_info().currsize <= aws.MOMENTS_SHARED == 1440
    assert aws.utc_timestamp(fortnight[-1]) is parsed[-1]
    assert aws.utc_timestamp(fortnight[0]) is not parsed[0]
