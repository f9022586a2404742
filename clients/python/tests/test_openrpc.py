"""protocol/openrpc.json against what the host answers.

Every conformance transcript is replayed (with the reference replayer of test_conformance.py), and
every message the host writes is checked against the document: a response to a documented method
by that method's result schema, or its error by the method's list of errors and the error's
`x-data-schema`; a `vm.changed` or `vm.event` by the schema of `x-notifications` (an `error`
event's value by `DomainError`). The transcripts
call every method and reach every error code but -32603 (conformance/README.md), so a result shape,
an error or a notification member the document does not describe fails here.

The schemas use a small part of JSON Schema; `check` below implements that part, and refuses a
keyword it does not know, so the document cannot use one unchecked.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List, Set

import pytest

from test_conformance import ROOT, TRANSCRIPTS, replay

DOCUMENT = json.loads((ROOT / "protocol" / "openrpc.json").read_text(encoding="utf-8"))
MESSAGE_ERRORS = {-32700, -32600}  # concern a message's form, not a method (SPEC §2)
ANNOTATIONS = {"description", "default", "title", "examples"}


class Invalid(Exception):
    pass


def resolve(schema: Any) -> Any:
    while isinstance(schema, dict) and "$ref" in schema:
        ref = schema["$ref"]
        assert ref.startswith("#/"), ref
        node: Any = DOCUMENT
        for part in ref[2:].split("/"):
            node = node[part]
        schema = node
    return schema


def type_matches(name: str, value: Any) -> bool:
    if name == "null":
        return value is None
    if name == "boolean":
        return isinstance(value, bool)
    if name == "integer":
        return isinstance(value, int) and not isinstance(value, bool) or (isinstance(value, float) and value.is_integer())
    if name == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if name == "string":
        return isinstance(value, str)
    if name == "array":
        return isinstance(value, list)
    if name == "object":
        return isinstance(value, dict)
    raise AssertionError(f"unknown type {name!r} in the document")


def check(schema: Any, value: Any, path: str = "$") -> None:
    """Raises Invalid naming the first place where *value* does not match *schema*."""
    schema = resolve(schema)
    if schema is True or schema == {}:
        return
    assert isinstance(schema, dict), schema
    unknown = set(schema) - ANNOTATIONS - {
        "type", "const", "enum", "properties", "required", "additionalProperties", "items",
        "minimum", "minLength", "minProperties", "anyOf"}
    assert not unknown, f"keywords the checker does not know: {unknown}"
    if "type" in schema:
        names = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not any(type_matches(name, value) for name in names):
            raise Invalid(f"{path}: expected {'/'.join(names)}, got {json.dumps(value)[:200]}")
    if "const" in schema and value != schema["const"]:
        raise Invalid(f"{path}: expected {json.dumps(schema['const'])}, got {json.dumps(value)[:200]}")
    if "enum" in schema and value not in schema["enum"]:
        raise Invalid(f"{path}: {json.dumps(value)[:200]} is not one of {schema['enum']}")
    if "minimum" in schema and isinstance(value, (int, float)) and value < schema["minimum"]:
        raise Invalid(f"{path}: {value} is below {schema['minimum']}")
    if "minLength" in schema and isinstance(value, str) and len(value) < schema["minLength"]:
        raise Invalid(f"{path}: shorter than {schema['minLength']}")
    if "anyOf" in schema:
        problems = []
        for option in schema["anyOf"]:
            try:
                check(option, value, path)
                break
            except Invalid as problem:
                problems.append(str(problem))
        else:
            raise Invalid(f"{path}: matches no option: {problems}")
    if isinstance(value, dict):
        properties = schema.get("properties", {})
        for name in schema.get("required", []):
            if name not in value:
                raise Invalid(f"{path}: missing member {name!r}")
        if "minProperties" in schema and len(value) < schema["minProperties"]:
            raise Invalid(f"{path}: fewer than {schema['minProperties']} members")
        extra = schema.get("additionalProperties", True)
        for name, member in value.items():
            if name in properties:
                check(properties[name], member, f"{path}.{name}")
            elif extra is False:
                raise Invalid(f"{path}: member {name!r} is not described")
            elif isinstance(extra, dict):
                check(extra, member, f"{path}.{name}")
    if isinstance(value, list) and "items" in schema:
        for index, element in enumerate(value):
            check(schema["items"], element, f"{path}[{index}]")


METHODS: Dict[str, Dict[str, Any]] = {method["name"]: method for method in DOCUMENT["methods"]}
NOTIFICATIONS = {entry["name"]: entry["params"] for entry in DOCUMENT["x-notifications"]}


def problems_of(transcript: Path) -> List[str]:
    """Replays *transcript* and returns every way the host's messages disagree with the document."""
    sent: Dict[str, Set[str]] = {}  # request id (as JSON text) → the methods sent with it
    problems: List[str] = []

    def note_request(message: Any) -> None:
        if isinstance(message, dict) and "id" in message and isinstance(message.get("method"), str):
            sent.setdefault(json.dumps(message["id"]), set()).add(message["method"])

    def check_response(response: Dict[str, Any]) -> None:
        methods = [METHODS[name] for name in sent.get(json.dumps(response.get("id")), set()) if name in METHODS]
        if "error" in response:
            code = response["error"].get("code")
            if code in MESSAGE_ERRORS:
                declared = [DOCUMENT["components"]["errors"][n] for n in ("ParseError", "InvalidRequest")]
            else:
                if not methods:
                    return  # a method the document does not name (-32601)
                declared = [resolve(ref) for method in methods for ref in method.get("errors", [])]
            matching = [error for error in declared if error["code"] == code]
            if not matching:
                problems.append(f"error {code} is not listed for {[m['name'] for m in methods]}: {response}")
                return
            data = response["error"].get("data")
            if data is None:
                return
            reasons = []
            for error in matching:
                if "x-data-schema" not in error:
                    reasons.append(f"{error['code']} carries no data")
                    continue
                try:
                    check(error["x-data-schema"], data, "error.data")
                    return
                except Invalid as problem:
                    reasons.append(str(problem))
            problems.append(f"error data of {code}: {reasons}: {response}")
            return
        if not methods:
            return
        reasons = []
        for method in methods:
            try:
                check(method["result"]["schema"], response.get("result"), "result")
                return
            except Invalid as problem:
                reasons.append(f"{method['name']}: {problem}")
        problems.append(f"result: {reasons}")

    def observe(direction: str, message: Any) -> None:
        if direction == "in":
            for member in message if isinstance(message, list) else [message]:
                note_request(member)
            return
        for member in message if isinstance(message, list) else [message]:
            if not isinstance(member, dict):
                continue
            if "method" in member:
                params = NOTIFICATIONS.get(member["method"])
                if params is None:
                    problems.append(f"a notification the document does not name: {member}")
                    continue
                try:
                    check(params, member.get("params"), "params")
                    if member["method"] == "vm.event" and member["params"]["name"] == "error":
                        check({"$ref": "#/components/schemas/DomainError"}, member["params"]["value"], "params.value")
                except Invalid as problem:
                    problems.append(f"{member['method']}: {problem}")
            else:
                check_response(member)

    replay(transcript, observe=observe)
    return problems


@pytest.mark.parametrize("path", sorted(TRANSCRIPTS.glob("*.jsonl")), ids=lambda p: p.stem)
def test_what_the_host_answers_is_what_openrpc_describes(path: Path) -> None:
    problems = problems_of(path)
    assert problems == [], "\n".join(problems[:10])


def test_every_method_has_a_result_schema_and_its_errors() -> None:
    for method in DOCUMENT["methods"]:
        assert "schema" in method["result"], method["name"]
        resolve(method["result"]["schema"])  # every reference resolves
        for error in method["errors"]:
            assert "code" in resolve(error), (method["name"], error)
        if not method.get("x-notification"):
            assert {"InvalidParams", "ShuttingDown"} <= {e["$ref"].rsplit("/", 1)[1] for e in method["errors"]}, method["name"]


def test_the_checker_refuses_what_the_schemas_refuse() -> None:
    create = METHODS["vm.create"]["result"]["schema"]
    check(create, {"vm": "p", "kind": "K", "inputs": [], "outputs": []})
    for wrong in [{"vm": "p", "kind": "K", "inputs": []},
                  {"vm": "p", "kind": "K", "inputs": [], "outputs": [], "extra": 1},
                  {"vm": "", "kind": "K", "inputs": [], "outputs": []},
                  {"vm": "p", "kind": "K", "inputs": [{"name": "x", "kind": "other", "value": {}}], "outputs": []}]:
        with pytest.raises(Invalid):
            check(create, wrong)
    with pytest.raises(Invalid):
        check({"$ref": "#/components/schemas/DomainError"},
              {"kind": "server", "code": 500, "message": "m", "input": "refresh"})  # no detail
