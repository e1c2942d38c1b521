"""The conformance vectors ``sessionspec-vectors/1``: the canonical JSON and expectation patterns every part of
the kit shares (format), the vector schema (schema), the building blocks (build), the groups that make the
committed vectors (groups), generation and loading (files), running them against an adapter (runner, run_cli,
diff, expectations), ``sessionspec vectors`` (command), the release artifact (pack) and docs/events.md
(events_doc)."""
