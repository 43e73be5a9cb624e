"""The report format: its version tags, its JSON Schema and the validator of that schema.

The JSON Schema ships as ``quadnet/harness/schema/report.schema.json`` (docs/report_schema.md
describes every field). :func:`validate_report` checks a parsed report against it without
third-party packages; the tests check that it agrees with ``jsonschema``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from importlib import resources
from typing import Any

__all__ = ["COMPARE_SCHEMA", "REPORT_SCHEMA", "report_schema", "validate_report"]

#: The report format this quadnet writes and reads (the ``schema`` field of a report).
REPORT_SCHEMA = "quadnet-report/1"
#: The format of ``quadnet compare --format json``.
COMPARE_SCHEMA = "quadnet-compare/1"


def report_schema() -> dict:
    """The JSON Schema of the report (``quadnet/harness/schema/report.schema.json``).

    Returns
    -------
    dict

    Examples
    --------
    >>> report_schema()["properties"]["schema"]["const"]
    'quadnet-report/1'
    """
    text = resources.files("quadnet.harness").joinpath("schema", "report.schema.json")
    return json.loads(text.read_text(encoding="utf-8"))


_TYPES = {"object": dict, "array": list, "string": str, "boolean": bool, "null": type(None)}


def _is_type(value, name: str) -> bool:
    if name in ("number", "integer"):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return False
        return name == "number" or float(value).is_integer()
    return isinstance(value, _TYPES[name])


def _validate(value, schema: Mapping, root: Mapping, path: str, out: list[str]) -> None:
    """The subset of JSON Schema the report schema uses ($ref, type, const, enum,
    required, properties, items, additionalProperties, anyOf, minimum, minLength)."""
    if "$ref" in schema:
        node = root
        for part in schema["$ref"].lstrip("#/").split("/"):
            node = node[part]
        _validate(value, node, root, path, out)
        return
    where = path or "the report"
    if "anyOf" in schema:
        for sub in schema["anyOf"]:
            trial: list[str] = []
            _validate(value, sub, root, path, trial)
            if not trial:
                break
        else:
            out.append(f"{where}: {value!r} is not one of the allowed forms")
            return
    if "const" in schema and value != schema["const"]:
        out.append(f"{where}: expected {schema['const']!r}, got {value!r}")
        return
    if "enum" in schema and value not in schema["enum"]:
        out.append(f"{where}: {value!r} is not one of {schema['enum']}")
        return
    if "type" in schema:
        names = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not any(_is_type(value, t) for t in names):
            out.append(f"{where}: expected {' or '.join(names)}, got {type(value).__name__}")
            return
    if "minimum" in schema and _is_type(value, "number") and value < schema["minimum"]:
        out.append(f"{where}: {value!r} is below {schema['minimum']}")
    if "minLength" in schema and isinstance(value, str) and len(value) < schema["minLength"]:
        out.append(f"{where}: empty text")
    if isinstance(value, dict):
        for key in schema.get("required", ()):
            if key not in value:
                out.append(f"{where}: missing field {key!r}")
        props = schema.get("properties", {})
        extra = schema.get("additionalProperties")
        for key, sub in value.items():
            if key in props:
                _validate(sub, props[key], root, f"{path}.{key}" if path else key, out)
            elif isinstance(extra, Mapping):
                _validate(sub, extra, root, f"{path}.{key}" if path else key, out)
    if isinstance(value, list) and "items" in schema:
        for i, item in enumerate(value):
            _validate(item, schema["items"], root, f"{path}[{i}]", out)


def validate_report(report: Any, *, legacy: bool = False) -> list[str]:
    """The problems that keep ``report`` from being a ``quadnet-report/1`` report.

    Parameters
    ----------
    report : object
        A parsed JSON document.
    legacy : bool, optional
        Accept a report written before the ``schema`` field existed (quadnet 0.1 and 0.2
        pre-releases; otherwise the same fields).

    Returns
    -------
    list of str
        Empty for a valid report; else one message per problem, each with the field's path.

    Examples
    --------
    >>> validate_report({"schema": "quadnet-report/1", "checks": [], "passed": True,
    ...                  "seed": 0, "mode": "quick", "versions": {}})
    []
    >>> validate_report({"schema": "quadnet-report/1", "checks": [{"name": "x"}],
    ...                  "passed": True, "seed": 0, "mode": "fast", "versions": {}})[:2]
    ["checks[0]: missing field 'claim'", "checks[0]: missing field 'passed'"]
    """
    schema = report_schema()
    if legacy:
        schema = dict(schema, required=[k for k in schema["required"] if k != "schema"])
    out: list[str] = []
    _validate(report, schema, schema, "", out)
    return out
