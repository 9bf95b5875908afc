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
    assert client_config().retries == {"mode": "standard", "max_attempts": 5}
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
