import json
from collections import OrderedDict
from typing import Any

import boto3
import botocore.session
import pytest
from botocore.loaders import Loader

from analyzer.collect import aws, service_models


def stock() -> Loader:
    loader: Loader = botocore.session.Session().get_component("data_loader")
    assert not isinstance(loader.file_loader, service_models.LeanFiles)
    return loader


def ordered(value: Any) -> str:
    """A model's text with its keys in the order they are held: equal texts, equal models in
    the same order (dicts compare equal whatever their order)."""
    return json.dumps(value)


@pytest.mark.parametrize("service", ["ec2", "cloudwatch", "rds"])
def test_a_lean_model_is_botocores_without_its_prose_in_the_same_order(service):
    lean = service_models.loader().load_service_model(service, "service-2")
    full = stock().load_service_model(service, "service-2")
    assert ordered(lean) != ordered(full)  # the prose is gone
    service_models.without_prose(full)
    assert ordered(lean) == ordered(full)
    assert set(lean["operations"]) == set(full["operations"])


def test_no_ordered_dict_and_no_prose_is_left_where_only_docstrings_read_it():
    model = service_models.loader().load_service_model("ec2", "service-2")

    def walk(value: Any) -> None:
        assert not isinstance(value, OrderedDict)
        if isinstance(value, dict):
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(model)
    assert "documentation" not in model
    places = [*model["operations"].values(), *model["shapes"].values()]
    places += [m for s in model["shapes"].values() for m in s.get("members", {}).values()]
    assert all(not set(service_models.PROSE) & set(place) for place in places)
    # A shape's name, referred to by many members, is one string held once.
    refs = [m["shape"] for s in model["shapes"].values() for m in s.get("members", {}).values()]
    strings = [ref for ref in refs if ref == "String"]
    assert len(strings) > 100 and len({id(ref) for ref in strings}) == 1


def test_documentation_botocore_reads_as_a_field_is_kept():
    """S3's client context parameters: botocore reads each one's `documentation` directly."""
    lean = service_models.loader().load_service_model("s3", "service-2")
    params = lean["clientContextParams"]
    assert params and all("documentation" in p for p in params.values())
    rules = service_models.loader().load_service_model("ec2", "endpoint-rule-set-1")
    full_rules = stock().load_service_model("ec2", "endpoint-rule-set-1")
    assert ordered(rules) == ordered(full_rules)


def sent(client: Any, call: str, **params: Any) -> bytes:
    """The body `client` would send for `call`, captured before it leaves."""
    bodies: list[bytes] = []

    def capture(request: Any, **_: Any) -> Any:
        bodies.append(request.body)
        raise RuntimeError("captured")

    client.meta.events.register("before-send", capture)
    with pytest.raises(RuntimeError, match="captured"):
        getattr(client, call)(**params)
    return bodies[0]


CALLS = [
    ("ec2", "describe_volumes", {"Filters": [{"Name": "tag:team", "Values": ["db", "search"]}]}),
    ("ec2", "modify_volume", {"VolumeId": "vol-1", "VolumeType": "gp3", "Iops": 6000}),
    ("ec2", "describe_instance_types", {"InstanceTypes": ["m5.large", "r6i.xlarge"]}),
    ("rds", "modify_db_instance", {"DBInstanceIdentifier": "db", "Iops": 12000}),
]


@pytest.mark.parametrize(("service", "call", "params"), CALLS)
def test_a_lean_client_sends_what_botocores_own_sends(service, call, params):
    keys = {"aws_access_key_id": "AKIDEXAMPLE", "aws_secret_access_key": "secret"}
    lean = aws.session("us-east-1").client(service, **keys)
    own = boto3.session.Session(region_name="us-east-1").client(service, **keys)
    assert sent(lean, call, **params) == sent(own, call, **params)


def test_a_lean_client_still_checks_its_parameters():
    lean = aws.session("us-east-1").client(
        "ec2", aws_access_key_id="AKIDEXAMPLE", aws_secret_access_key="secret"
    )
    with pytest.raises(Exception, match="VolumeId"):
        lean.modify_volume(VolumeType="gp3")
