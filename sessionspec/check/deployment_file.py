"""Reading a deployment file (``check --deployment FILE``, ``sessionspec.api``): JSON read losslessly (FMT-2's
reader), then the model's reader of each part (:func:`sessionspec.model.deployment.read_deployment`); a file
that cannot be used is a usage error naming the field and the rule that refuses it."""

from __future__ import annotations

from sessionspec.model.deployment import Deployment, read_deployment
from sessionspec.model.jsonval import JsonParseFailure, parse_json
from sessionspec.model.rejected import Rejected


def deployment_from_text(text: str, name: str = "deployment") -> Deployment | str:
    """The deployment a JSON text states, or why it cannot be used (one line: the file, the field, the rule)."""
    value = parse_json(text)
    if isinstance(value, JsonParseFailure):
        return f"{name}: not JSON ({value.reason})"
    read = read_deployment(value)
    if isinstance(read, Rejected):
        return f"{name}: {read.reason} ({read.rule})"
    return read


def load_deployment(path: str) -> Deployment | str:
    """The deployment file at ``path``, or why it cannot be used."""
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except (OSError, UnicodeDecodeError) as error:
        return f"{path}: cannot read: {getattr(error, 'strerror', None) or error}"
    return deployment_from_text(text, path)
