"""What to deploy in each watched account (deploy/accounts/): the member role as a
CloudFormation StackSet template and as Terraform, and the analyzer's own role's extra policy.
Each grants only the read-only actions the analyzer calls, trusts only the analyzer's role,
and only with the external id."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from analyzer.collect.aws import ACTIONS, ORGANIZATION_ACTIONS

HERE = Path(__file__).resolve().parents[2] / "deploy" / "accounts"
READ_ONLY_VERBS = ("Describe", "Get", "List")


def _read_only(actions: list[str]) -> bool:
    return all(a.split(":", 1)[1].startswith(READ_ONLY_VERBS) for a in actions)


def test_the_stackset_template_grants_the_read_only_actions_to_the_analyzer_alone() -> None:
    template: dict[str, Any] = yaml.safe_load(
        (HERE / "member-role.cloudformation.yaml").read_text()
    )
    assert template["AWSTemplateFormatVersion"] == "2010-09-09"
    role = template["Resources"]["MemberRole"]
    assert role["Type"] == "AWS::IAM::Role"
    props = role["Properties"]
    (trust,) = props["AssumeRolePolicyDocument"]["Statement"]
    assert trust == {
        "Effect": "Allow",
        "Principal": {"AWS": {"Ref": "AnalyzerRoleArn"}},
        "Action": "sts:AssumeRole",
        "Condition": {"StringEquals": {"sts:ExternalId": {"Ref": "ExternalId"}}},
    }
    (policy,) = props["Policies"]
    (grant,) = policy["PolicyDocument"]["Statement"]
    assert grant["Action"] == list(ACTIONS) and _read_only(grant["Action"])
    assert grant["Effect"] == "Allow" and grant["Resource"] == "*"
    assert template["Parameters"]["ExternalId"]["NoEcho"] is True
    # Every reference names a parameter or a resource of the template.
    names = set(template["Parameters"]) | set(template["Resources"])
    refs = _refs(template)
    assert refs and refs <= names


def _refs(node: Any) -> set[str]:
    if isinstance(node, dict):
        found = {str(node["Ref"])} if set(node) == {"Ref"} else set()
        if "Fn::GetAtt" in node:
            found.add(str(node["Fn::GetAtt"][0]))
        return found.union(*(_refs(v) for v in node.values()))
    if isinstance(node, list):
        return set().union(*(_refs(v) for v in node))
    return set()


def test_the_terraform_grants_the_same_and_trusts_the_same() -> None:
    config = json.loads((HERE / "member-role.tf.json").read_text())
    documents = config["data"]["aws_iam_policy_document"]
    (trust,) = documents["trust"]["statement"]
    assert trust["actions"] == ["sts:AssumeRole"]
    assert trust["principals"] == [{"type": "AWS", "identifiers": ["${var.analyzer_role_arn}"]}]
    assert trust["condition"] == [
        {"test": "StringEquals", "variable": "sts:ExternalId", "values": ["${var.external_id}"]}
    ]
    (grant,) = documents["read_only"]["statement"]
    assert grant["actions"] == list(ACTIONS) and grant["resources"] == ["*"]
    role = config["resource"]["aws_iam_role"]["ebs_analyzer"]
    assert role["assume_role_policy"] == "${data.aws_iam_policy_document.trust.json}"
    policy = config["resource"]["aws_iam_role_policy"]["ebs_analyzer_read_only"]
    assert policy["policy"] == "${data.aws_iam_policy_document.read_only.json}"
    assert config["variable"]["external_id"]["sensitive"] is True


def test_the_analyzers_own_role_may_assume_the_member_roles_and_list_the_organization() -> None:
    policy = json.loads((HERE / "analyzer-role-policy.json").read_text())
    assume, listing = policy["Statement"]
    assert assume["Action"] == "sts:AssumeRole"
    role_name = json.loads((HERE / "member-role.tf.json").read_text())["variable"]["role_name"]
    assert assume["Resource"] == f"arn:aws:iam::*:role/{role_name['default']}"
    assert listing["Action"] == list(ORGANIZATION_ACTIONS) and _read_only(listing["Action"])
