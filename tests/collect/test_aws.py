import pytest
from botocore.exceptions import ClientError, EndpointConnectionError

from analyzer.collect.aws import calling, client_config
from analyzer.errors import AwsAccessError, AwsCallError


def client_error(code: str, message: str = "nope") -> ClientError:
    return ClientError({"Error": {"Code": code, "Message": message}}, "DescribeVolumes")


@pytest.mark.parametrize(
    "code",
    [
        "AccessDenied",
        "UnauthorizedOperation",
        "AuthFailure",
        "ExpiredToken",
        "InvalidClientTokenId",
    ],
)
def test_access_errors_are_fatal_and_name_the_call(code):
    with pytest.raises(AwsAccessError) as info, calling("ec2:DescribeVolumes", "us-east-1"):
        raise client_error(code, "You are not authorized")
    assert str(info.value) == f"ec2:DescribeVolumes in us-east-1: {code}: You are not authorized"


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
