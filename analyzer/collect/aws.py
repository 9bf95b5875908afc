"""boto3 clients through the standard credential chain, and what their failures mean.

Retries are botocore's own (`standard` mode); this module only decides whether a failure
that is left after them means "no access" (fatal for a command) or "this call failed".
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import boto3
import botocore.session
from botocore.config import Config
from botocore.exceptions import (
    BotoCoreError,
    ClientError,
    ConnectTimeoutError,
    EndpointConnectionError,
    NoCredentialsError,
    NoRegionError,
    PartialCredentialsError,
    ProfileNotFound,
    ReadTimeoutError,
    TokenRetrievalError,
)
from botocore.parsers import ResponseParserError
from botocore.utils import parse_timestamp

from analyzer import __version__
from analyzer.collect import service_models
from analyzer.collect.reply import OffContract
from analyzer.errors import AwsAccessError, AwsCallError, ConfigError

ACCESS_CODES = frozenset(
    {
        "AccessDenied",
        "AccessDeniedException",
        "AuthFailure",
        "ExpiredToken",
        "ExpiredTokenException",
        "InvalidClientTokenId",
        "OptInRequired",
        "SignatureDoesNotMatch",
        "UnauthorizedOperation",
        "UnrecognizedClientException",
    }
)

UNREACHABLE = (
    EndpointConnectionError,
    ConnectTimeoutError,
    ReadTimeoutError,
    NoCredentialsError,
    PartialCredentialsError,
    TokenRetrievalError,
)


CONNECT_TIMEOUT_S = 5
READ_TIMEOUT_S = 15
MAX_ATTEMPTS = 3
ONCE = {"mode": "standard", "total_max_attempts": 1}
"""botocore's retries setting for a call sent once: one attempt in all, no retry."""


def client_config(validate: bool = True) -> Config:
    """Standard retries unless the user chose their own (AWS_MAX_ATTEMPTS, AWS_RETRY_MODE or
    the profile): a retries setting here would override theirs. `validate=False` skips
    botocore's check of each request against the service model.

    The timeouts bound a call that hangs to about a minute with its retries (3 attempts of
    at most 5 s to connect and 15 s to read, and the backoff between them), the default
    interval: a GetMetricData of 500 queries answers in a second or two."""
    options: dict[str, Any] = {
        "user_agent_extra": f"ebs-bottleneck-analyzer/{__version__}",
        "connect_timeout": CONNECT_TIMEOUT_S,
        "read_timeout": READ_TIMEOUT_S,
        "parameter_validation": validate,
    }
    if not ({"AWS_MAX_ATTEMPTS", "AWS_RETRY_MODE"} & set(os.environ)):
        options["retries"] = {"mode": "standard", "max_attempts": MAX_ATTEMPTS}
    return Config(**options)


def default_region() -> str | None:
    """The region the AWS SDKs would use: `AWS_REGION`, which the SDKs and the AWS CLI read
    first (https://docs.aws.amazon.com/sdkref/latest/guide/feature-region.html) but botocore
    does not, then botocore's chain: `AWS_DEFAULT_REGION`, the profile's `region`."""
    if chosen := os.environ.get("AWS_REGION", "").strip():
        return chosen
    try:
        region: str | None = boto3.session.Session().region_name
        return region
    except ProfileNotFound as exc:
        raise ConfigError(f"AWS profile: {exc}") from None


def utc_timestamp(value: Any) -> datetime:
    """Timestamps as UTC datetimes. botocore's default turns each one, of every datapoint, into
    a datetime in the local time zone through dateutil: most of the cost of a large fetch.

    A value that is no timestamp (a boolean, a moment beyond any calendar) raises OffContract:
    the answer is off its contract, and its call fails."""
    if isinstance(value, bool):
        raise OffContract(f"expected a timestamp, got {value!r}")
    try:
        if isinstance(value, int | float):
            return _epoch(value)
        parsed: datetime = parse_timestamp(value)
        return parsed.astimezone(UTC)
    except (OverflowError, OSError) as exc:
        raise OffContract(f"timestamp {str(value)[:40]!r} out of range ({exc})") from None


MOMENTS_SHARED = 1440
"""The moments whose datetimes are kept for the next answer to share: a day of minutes. The
history spans the rules' reach (40 minutes with the rules shipped) and each cycle parses its
newest minutes; a fortnight read for weighing passes 20,160 through the cache and leaves it
holding the newest of them, the ones the polls share."""


@functools.lru_cache(maxsize=MOMENTS_SHARED)
def _epoch(value: float) -> datetime:
    """One datetime object per distinct moment, shared by every series that has a point then:
    a fleet's datapoints fall on a few thousand minutes, not millions of moments."""
    return datetime.fromtimestamp(value, UTC)


def session(region: str, core: botocore.session.Session | None = None) -> boto3.session.Session:
    """A session of the standard chain (or of `core`, an account's assumed role) whose
    clients parse timestamps to UTC directly."""
    if core is None:
        core = botocore.session.get_session()
        core.register_component("data_loader", service_models.loader())
    core.get_component("response_parser_factory").set_parser_defaults(
        timestamp_parser=utc_timestamp
    )
    return boto3.session.Session(botocore_session=core, region_name=region)


@dataclass
class Clients:
    """The clients of one region, created once and reused across cycles."""

    region: str
    _session: boto3.session.Session = field(repr=False)
    _cache: dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def for_region(cls, region: str, **overrides: Any) -> Clients:
        """Clients of one region; `overrides` stand in for services (cloudwatch=…)."""
        try:
            return cls(region, session(region), dict(overrides))
        except ProfileNotFound as exc:
            raise ConfigError(f"AWS profile: {exc}") from None

    def client(self, service: str) -> Any:
        if service not in self._cache:
            try:
                # GetMetricData requests are built in one place (`cloudwatch.arguments`), which
                # a test checks against the service model; checking every call's 500 queries
                # again costs a fifth of a steady cycle on a large fleet.
                config = client_config(validate=service != "cloudwatch")
                self._cache[service] = self._session.client(service, config=config)
            except NoRegionError:
                raise ConfigError(NO_REGION) from None
        return self._cache[service]

    def once(self, service: str) -> Any:
        """A client whose calls go out once, whatever the user's retry settings: the calls
        that change a resource. A ModifyVolume resent after a read timeout meets
        `IncorrectModificationState` on AWS while the first one is under way, and the
        modification made would be reported as failed; the caller reads the resource back
        instead of retrying."""
        key = f"{service}:once"
        if key not in self._cache:
            try:
                config = client_config().merge(Config(retries=ONCE))
                self._cache[key] = self._session.client(service, config=config)
            except NoRegionError:
                raise ConfigError(NO_REGION) from None
        return self._cache[key]

    @property
    def ec2(self) -> Any:
        return self.client("ec2")

    @property
    def cloudwatch(self) -> Any:
        return self.client("cloudwatch")

    @property
    def rds(self) -> Any:
        return self.client("rds")


def error_code(exc: ClientError) -> str:
    return str(exc.response.get("Error", {}).get("Code", "Unknown"))


def error_text(exc: BaseException) -> str:
    """One line: the error's code and the first line of its message, anything that looks
    like a credential redacted. (SignatureDoesNotMatch echoes the canonical request, session
    token included, on the lines after the first.)"""
    if isinstance(exc, ClientError):
        message = exc.response.get("Error", {}).get("Message", "")
        return _one_line(f"{error_code(exc)}: {message}".rstrip(": "))
    return _one_line(str(exc) or type(exc).__name__)


MAX_ERROR_CHARS = 300
CREDENTIALS = re.compile(
    r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b"  # access key ids
    r"|(?i:(?:x-amz-security-token|x-amz-credential|signature|aws_secret_access_key|"
    r"aws_session_token)[=:]\s*)\S+"  # token, signature or secret after its name
    r"|[A-Za-z0-9+/=]{40,}"  # long base64: a secret key or a session token
)


def _one_line(text: str) -> str:
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    first = CREDENTIALS.sub("[redacted]", first)
    if len(first) > MAX_ERROR_CHARS:
        first = first[: MAX_ERROR_CHARS - 1] + "…"
    return first


MALFORMED = (
    ValueError,
    KeyError,
    TypeError,
    AttributeError,
    IndexError,
    ArithmeticError,
    RecursionError,
    ResponseParserError,
)
"""What reading an answer off its contract raises, in botocore's parsers (a JSON list where a
structure belongs: AttributeError; a body nested past the recursion limit) or in ours
(OffContract, a ValueError, naming the field)."""


def malformed_text(exc: BaseException) -> str:
    """The reason an answer is malformed: the field, where the analyzer's checks named it."""
    if isinstance(exc, OffContract):
        return _one_line(str(exc))
    return _one_line(f"{type(exc).__name__}: {exc}")


NO_REGION = (
    "no AWS region: pass --region, or set EBS_ANALYZER_REGION, AWS_REGION or "
    "AWS_DEFAULT_REGION (or `region` in the AWS profile)"
)

ACTIONS = (
    "cloudwatch:GetMetricData",
    "cloudwatch:ListMetrics",
    "ec2:DescribeInstanceTypes",
    "ec2:DescribeInstances",
    "ec2:DescribeVolumeStatus",
    "ec2:DescribeVolumes",
    "ec2:DescribeVolumesModifications",
    "pricing:GetProducts",
    "rds:DescribeDBInstances",
    "rds:DescribeOrderableDBInstanceOptions",
)
"""Every action the analyzer calls in a watched account, all of them read-only."""

ORGANIZATION_ACTIONS = (
    "organizations:ListAccounts",
    "organizations:ListParents",
    "organizations:ListTagsForResource",
)
"""What listing an Organization's accounts calls, in the management account (or a delegated
administrator's), beside `sts:AssumeRole` on the member roles."""

UNPERMISSIONED = ("sts:GetCallerIdentity",)
"""Calls no policy needs to allow (STS API Reference, GetCallerIdentity: "No permissions are
required to perform this operation")."""


def iam_policy() -> dict[str, Any]:
    """The IAM policy that grants `ACTIONS`: deploy/iam-policy.json, and `ebs-analyzer
    iam-policy` for those who installed the package alone."""
    return {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Sid": "EbsBottleneckAnalyzerReadOnly",
                "Effect": "Allow",
                "Action": list(ACTIONS),
                "Resource": "*",
            }
        ],
    }


APPLY_ACTIONS = ("ec2:ModifyVolume", "rds:ModifyDBInstance")
"""The only calls that change an account, made by `apply` alone."""


def apply_policy(tag: str = "ebs-analyzer/apply=allowed") -> dict[str, Any]:
    """The policy that lets `apply` change what carries the apply tag, and nothing else:
    deploy/iam-policy-apply.json, and `ebs-analyzer iam-policy --apply`. EC2 and RDS both
    authorize on `aws:ResourceTag/KEY` (Service Authorization Reference, ModifyVolume and
    ModifyDBInstance: the resource's tags as condition keys)."""
    key, _, value = tag.partition("=")
    return {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Sid": "EbsBottleneckAnalyzerApplyTaggedOnly",
                "Effect": "Allow",
                "Action": list(APPLY_ACTIONS),
                "Resource": "*",
                "Condition": {"StringEquals": {f"aws:ResourceTag/{key}": value}},
            }
        ],
    }


POLICY = "deploy/iam-policy.json, or `ebs-analyzer iam-policy`"
"""Where the policy is: in the repository, and printed by the program."""

CREDENTIALS_HINT = (
    "set AWS_PROFILE, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or run with an "
    f"instance or pod role; the permissions it needs are in {POLICY}"
)


def next_step(operation: str, code: str | None, exc: BaseException | None = None) -> str:
    """What to do about a refused or unreachable call, to follow its error on the same line."""
    if isinstance(exc, NoCredentialsError | PartialCredentialsError):
        return CREDENTIALS_HINT
    if isinstance(exc, TokenRetrievalError):
        return "the SSO session has ended: run `aws sso login` for this profile"
    if isinstance(exc, EndpointConnectionError):
        return "check the region's name and the network (and AWS_ENDPOINT_URL, if set)"
    if code in {"ExpiredToken", "ExpiredTokenException"}:
        return "the session's credentials have expired: renew them (or the role's session)"
    if code in {"InvalidClientTokenId", "UnrecognizedClientException", "AuthFailure"}:
        return "AWS does not know these credentials: check the access key and the profile"
    if code == "SignatureDoesNotMatch":
        return "the secret access key does not match its key id: check AWS_SECRET_ACCESS_KEY"
    if code == "OptInRequired":
        return "the region is not enabled for this account: enable it, or drop it from --region"
    if code is not None:
        return f"grant {operation} to this identity (every action it calls: {POLICY})"
    return ""


def _refused(where: str, operation: str, reason: str, code: str | None, exc: BaseException) -> str:
    step = next_step(operation, code, exc)
    return f"{where}: {reason}: {step}" if step else f"{where}: {reason}"


@contextmanager
def calling(operation: str, region: str) -> Iterator[None]:
    """Name the call in whatever escapes: `ec2:DescribeVolumes in us-east-1: AccessDenied: …`."""
    where = f"{operation} in {region}"
    try:
        yield
    except ClientError as exc:
        code = error_code(exc)
        if code in ACCESS_CODES:
            message = _refused(where, operation, error_text(exc), code, exc)
            raise AwsAccessError(message, code) from None
        raise AwsCallError(f"{where}: {error_text(exc)}", code) from None
    except UNREACHABLE as exc:
        raise AwsAccessError(_refused(where, operation, error_text(exc), None, exc)) from None
    except BotoCoreError as exc:
        raise AwsCallError(f"{where}: {error_text(exc)}") from None
    except MALFORMED as exc:
        # A body that could not be decoded (UnicodeDecodeError is a ValueError) or is not the
        # answer's shape: this call failed, in one line. Only the call and the reading of its
        # answer run inside `calling`.
        raise AwsCallError(f"{where}: malformed answer: {malformed_text(exc)}") from None
