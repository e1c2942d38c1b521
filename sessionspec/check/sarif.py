"""``check --format sarif``: one SARIF 2.1.0 log (OASIS; the format GitHub code scanning uploads).

Built from the ``json`` records (schema 4), so every way of running a check (``--jobs``, ``--dask``) gives the
same document.  One run, its tool ``sessionspec`` with one ``reportingDescriptor`` per rule met (the rule
book's sentence as its description, the area as a tag), and one result per finding: ``ruleId``, ``level``
(``error`` for a finding that makes the file invalid, ``warning`` for a limit, a bug or an ``only if``),
``message.text`` (the reason and the real loader's answer), the file and line as its location (relative to the
current directory, ``%SRCROOT%``, when the file lies under it), a stable ``partialFingerprints`` entry (rule,
path, seq and reason: code scanning matches results across runs by it), and for a knock-on its cause as a
related location and ``properties.causedBy``.  A file that is unknown or unreadable without a finding is one
result of the pseudo-rule ``sessionspec/unknown`` or ``sessionspec/unreadable``, so no exit code is left
without a result saying why.  The run's ``invocations`` carries the exit code; ``properties.summary`` the counts
(and the run's ``notDecided``); each file whose check could not decide some rules is one of the run's
``artifacts``, its ``properties.notDecided`` the file record's list.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, final
from urllib.parse import quote

from sessionspec.check.output import workspace_path
from sessionspec.check.report import LOADER_TEXT

SCHEMA_URI: Final = "https://json.schemastore.org/sarif-2.1.0.json"
SRCROOT: Final = "%SRCROOT%"
# Results for a file-level verdict that no finding explains.
PSEUDO_RULES: Final = {
    "sessionspec/unknown": ("warning", "the log is outside what sessionspec decides (a checker limit, mixed dialect markers, "
                                       "a replay script, a pre-A55 design): not decided, so not a pass"),
    "sessionspec/unreadable": ("error", "the input could not be read (missing, not a regular file, a cut or corrupt zstd stream)"),
}


def _descriptions() -> dict[str, str]:
    """Each rule's and quirk's one-line description, from the registry."""
    from sessionspec.spec.registry import quirks, rules

    return {**{r.id: r.lead for r in rules()}, **{q.id: q.title for q in quirks()}}


def _short(text: str, limit: int = 160) -> str:
    """A description's start, cut at a word."""
    return text if len(text) <= limit else text[: limit - 1].rsplit(" ", 1)[0] + "…"


def _artifact(path: str) -> dict[str, object]:
    """Where a result lies: a relative URI under ``%SRCROOT%`` (the current directory), or an absolute one."""
    shown = workspace_path(path)
    if shown.startswith("<"):  # <stdin>: no file to point at
        return {"description": {"text": shown}}
    if "://" in shown:
        return {"uri": shown}
    if os.path.isabs(shown):
        return {"uri": Path(shown).as_uri()}
    return {"uri": quote(shown), "uriBaseId": SRCROOT}


def _location(path: str, line: object, message: str | None = None) -> dict[str, object]:
    physical: dict[str, object] = {"artifactLocation": _artifact(path)}
    if isinstance(line, int) and line >= 1:
        physical["region"] = {"startLine": line}
    location: dict[str, object] = {"physicalLocation": physical}
    if message is not None:
        location["message"] = {"text": message}
    return location


def _fingerprint(*parts: object) -> str:
    return hashlib.sha256(json.dumps(parts, ensure_ascii=True).encode()).hexdigest()[:32]


@final
@dataclass(slots=True)
class SarifDocument:
    """The SARIF log of one run, fed one ``file`` record at a time, written whole by :meth:`finish`."""

    version: str
    results: list[dict[str, object]] = field(default_factory=list)
    rules: dict[str, int] = field(default_factory=dict)  # rule ID -> its index in the driver's rules
    levels: dict[str, str] = field(default_factory=dict)
    # The files whose check could not decide some rules (``notDecided``), as the run's artifacts.
    artifacts: list[dict[str, object]] = field(default_factory=list)

    def _rule(self, rule: str, level: str) -> int:
        if rule not in self.rules:
            self.rules[rule] = len(self.rules)
            self.levels[rule] = level
        elif level == "error":
            self.levels[rule] = "error"
        return self.rules[rule]

    def add(self, record: dict[str, object]) -> None:
        path = str(record["path"])
        findings = record.get("findings")
        assert isinstance(findings, list)
        for finding in findings:
            self._finding(path, finding)
        undecided = record.get("notDecided")
        if isinstance(undecided, list) and undecided:
            self.artifacts.append({"location": _artifact(path), "properties": {"notDecided": undecided}})
        verdict = record["verdict"]
        if not findings and verdict in ("unknown", "unreadable"):
            rule = f"sessionspec/{verdict}"
            level = PSEUDO_RULES[rule][0]
            self.results.append({"ruleId": rule, "ruleIndex": self._rule(rule, level), "level": level,
                                 "message": {"text": f"{verdict}: {record.get('reason') or verdict}"},
                                 "locations": [_location(path, None)],
                                 "partialFingerprints": {"sessionspecVerdict/v1": _fingerprint(path, verdict)}})

    def _finding(self, path: str, finding: dict[str, object]) -> None:
        rule = str(finding["rule"])
        level = "error" if finding["kind"] == "invalid" and finding.get("onlyIf") is None else "warning"
        only_if = f"(only if {finding['onlyIf']}) " if finding.get("onlyIf") is not None else ""
        seq = f"seq {finding['seq']}: " if finding.get("seq") is not None else ""
        properties: dict[str, object] = {"seq": finding.get("seq"), "kind": finding["kind"], "loader": finding["loader"]}
        result: dict[str, object] = {
            "ruleId": rule, "ruleIndex": self._rule(rule, level), "level": level,
            "message": {"text": f"{seq}{only_if}{finding['reason']} ({LOADER_TEXT[str(finding['loader'])]})"},
            "locations": [_location(path, finding.get("line"))],
            "partialFingerprints": {"sessionspecFinding/v1": _fingerprint(rule, path, finding.get("seq"), finding["reason"])},
            "properties": properties,
        }
        cause = finding.get("causedBy")
        if isinstance(cause, dict):
            where = f"line {cause['line']}" if cause.get("line") is not None else f"seq {cause.get('seq')}"
            result["relatedLocations"] = [{"id": 1, **_location(path, cause.get("line"), f"the finding this follows from: {cause['rule']} at {where}")}]
            properties["causedBy"] = cause
        self.results.append(result)

    def finish(self, summary: dict[str, object]) -> str:
        descriptions = _descriptions()
        rules = []
        for rule in self.rules:
            text = PSEUDO_RULES[rule][1] if rule in PSEUDO_RULES else descriptions.get(rule, rule)
            area = rule.rsplit("-", 1)[0] if rule not in PSEUDO_RULES else "verdict"
            rules.append({"id": rule, "shortDescription": {"text": _short(text)}, "fullDescription": {"text": text},
                          "defaultConfiguration": {"level": self.levels[rule]}, "properties": {"tags": [area]}})
        run: dict[str, object] = {
            "tool": {"driver": {"name": "sessionspec", "version": self.version, "rules": rules}},
            "originalUriBaseIds": {SRCROOT: {"uri": Path.cwd().as_uri() + "/"}},
            "invocations": [{"executionSuccessful": True, "exitCode": summary["exit"]}],
            "results": self.results,
            **({"artifacts": self.artifacts} if self.artifacts else {}),
            "properties": {"summary": {k: v for k, v in summary.items() if k != "kind"}},
        }
        log = {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}
        return json.dumps(log, ensure_ascii=True, indent=1) + "\n"
