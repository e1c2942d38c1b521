"""``check --format junit``: one JUnit XML report, the test-result format CI systems read (Jenkins, GitLab, Azure).

Built from the ``json`` records (schema 4), like SARIF.  One ``<testsuite name="sessionspec check">`` with one
``<testcase>`` per file (``classname`` ``sessionspec.check``, ``name`` the path): ``valid`` passes; ``invalid``
is a ``<failure>`` (its message counts the findings and names the first, its text lists them as ``check -v`` does,
each knock-on saying what it follows from); ``unknown`` is ``<skipped>`` with the reason (not decided: a skip, never a
pass, and the exit code stays 4); ``unreadable`` is an ``<error>``.  No timings, so the report is deterministic.
"""

from __future__ import annotations

import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass, field
from typing import final

from sessionspec.check.paths import escape_text
from sessionspec.check.report import LOADER_TEXT


def _finding_line(path: str, finding: dict[str, object]) -> str:
    where = f"{path}:{finding['line']}" if finding.get("line") is not None else path
    seq = f" seq {finding['seq']}" if finding.get("seq") is not None else ""
    cause = finding.get("causedBy")
    follows = f" [follows from {cause['rule']} at line {cause['line']}]" if isinstance(cause, dict) else ""
    return escape_text(f"{where}: {finding['rule']}{seq}: {finding['reason']} ({LOADER_TEXT[str(finding['loader'])]}){follows}")


@final
@dataclass(slots=True)
class JunitDocument:
    """The JUnit report of one run, fed one ``file`` record at a time, written whole by :meth:`finish`."""

    cases: list[ElementTree.Element] = field(default_factory=list)

    def add(self, record: dict[str, object]) -> None:
        path = escape_text(str(record["path"]))
        case = ElementTree.Element("testcase", {"classname": "sessionspec.check", "name": path})
        findings = record.get("findings")
        assert isinstance(findings, list)
        reason = escape_text(str(record.get("reason") or ""))
        match record["verdict"]:
            case "invalid":
                first = findings[0] if findings else None
                message = f"invalid: {len(findings)} finding{'s' if len(findings) != 1 else ''}" + (
                    f", the first {first['rule']} at line {first['line']}" if first is not None else "")
                failure = ElementTree.SubElement(case, "failure", {"message": message, "type": "invalid"})
                failure.text = "\n".join(_finding_line(path, f) for f in findings) + "\n"
            case "unknown":
                ElementTree.SubElement(case, "skipped", {"message": f"unknown (not decided, exit 4): {reason}"})
            case "unreadable":
                ElementTree.SubElement(case, "error", {"message": f"unreadable: {reason}", "type": "unreadable"})
        undecided = record.get("notDecided")
        if isinstance(undecided, list) and undecided:
            # The rules this file's check could not decide (sessionspec/check/declines.py), as the case's properties.
            properties = ElementTree.Element("properties")
            case.insert(0, properties)
            for item in undecided:
                ElementTree.SubElement(properties, "property", {"name": f"not-decided {item['rule']}",
                                                                "value": f"{item['why']}: {item['count']} {item['what']} from seq {item['seq']}"})
        notes = record.get("notes")
        if isinstance(notes, list) and notes:
            ElementTree.SubElement(case, "system-out").text = escape_text("notes: " + "; ".join(map(str, notes))) + "\n"
        self.cases.append(case)

    def finish(self, summary: dict[str, object]) -> str:
        counts = {"tests": str(summary["files"]), "failures": str(summary["invalid"]), "errors": str(summary["unreadable"]),
                  "skipped": str(summary["unknown"])}
        suites = ElementTree.Element("testsuites", {"name": "sessionspec check", **counts})
        suite = ElementTree.SubElement(suites, "testsuite", {"name": "sessionspec check", **counts})
        undecided = summary.get("notDecided")
        if isinstance(undecided, list) and undecided:
            # The rules the run could not decide (sessionspec/check/undecided.py), as properties of the suite.
            properties = ElementTree.SubElement(suite, "properties")
            for item in undecided:
                if isinstance(item, dict):
                    ElementTree.SubElement(properties, "property", {"name": f"not-decided {item.get('rule')}", "value": str(item.get("why"))})
        suite.extend(self.cases)
        ElementTree.indent(suites)
        return '<?xml version="1.0" encoding="utf-8"?>\n' + ElementTree.tostring(suites, encoding="unicode") + "\n"
