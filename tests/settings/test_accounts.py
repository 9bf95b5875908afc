"""The accounts contract: listed accounts, an Organization, and a monitoring account."""

import pytest

from analyzer import settings
from tests.helpers import refusal

ACCOUNTS = """\
accounts:
  - id: "111111111111"
    name: prod
    role_arn: arn:aws:iam::111111111111:role/ebs-analyzer
    external_id: s3cret-external
    regions: [us-east-1]
    tags: {team: db}
  - id: 222222222222
organization:
  role_name: ebs-analyzer
  include: {ids: [], names: [], ous: [ou-ab12-cd34], tags: {}}
  exclude: {names: [sandbox]}
"""


def test_the_accounts_contract_loads(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_text(ACCOUNTS)
    loaded = settings.load({}, path)
    prod, other = loaded.accounts
    assert (prod.id, prod.name, prod.regions, prod.tags) == (
        "111111111111",
        "prod",
        ("us-east-1",),
        {"team": "db"},
    )
    assert prod.external_id is not None and "s3cret" not in repr(prod)
    assert other.id == "222222222222"  # a YAML number of twelve digits is read as the id
    assert loaded.organization is not None
    assert loaded.organization.include.ous == ("ou-ab12-cd34",)
    assert loaded.organization.exclude.names == ("sandbox",)


def test_the_external_id_never_reaches_the_log(tmp_path):
    from analyzer import redaction

    path = tmp_path / "config.yaml"
    path.write_text(ACCOUNTS)
    settings.load({}, path)
    assert "s3cret-external" not in redaction.scrub("assumed with s3cret-external")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "accounts:\n  - id: '111111111111'\n    nmae: prod\n",
            "accounts.0.nmae: unknown setting (did you mean 'name'?)",
        ),
        ("accounts:\n  - id: 11111111111\n", "not 12 digits: quote account ids"),
        ("accounts:\n  - id: '1111'\n", "'1111' is not an AWS account id"),
        (
            "accounts:\n  - id: '111111111111'\n    role_arn: arn:aws:iam::222222222222:role/x\n",
            "role_arn names account 222222222222, not this entry's 111111111111",
        ),
        (
            "accounts:\n  - id: '111111111111'\n    role_arn: ebs-analyzer\n",
            "is not an IAM role's ARN (arn:aws:iam::111111111111:role/NAME)",
        ),
        (
            "accounts:\n  - id: '111111111111'\n  - id: '111111111111'\n",
            "account 111111111111 is listed twice",
        ),
        ("accounts:\n  - id: '111111111111'\n    regions: [us-east]\n", "not an AWS region's name"),
        ("accounts:\n  - id: '111111111111'\n    budget: 0\n", "budget"),
        ("organization:\n  role_name: arn:aws:iam::1:role/x\n", "the ARN goes in accounts:"),
        (
            "organization:\n  include: {ou: [x]}\n",
            "organization.include.ou: unknown setting (did you mean 'ous'?)",
        ),
    ],
)
def test_a_wrong_account_setting_is_one_clear_line(tmp_path, text, message):
    path, said = refusal(tmp_path, text)
    assert message in said
    assert str(path) in said


def test_accounts_from_the_environment_as_json(monkeypatch):
    monkeypatch.setenv("EBS_ANALYZER_ACCOUNTS", '[{"id": "111111111111", "name": "prod"}]')
    assert settings.load().accounts[0].name == "prod"


def test_a_monitoring_account_is_off_unless_set(monkeypatch):
    assert settings.load().monitoring_account is False
    monkeypatch.setenv("EBS_ANALYZER_MONITORING_ACCOUNT", "true")
    assert settings.load().monitoring_account is True
