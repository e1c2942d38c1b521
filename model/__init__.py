"""sessionspec model: the pure functional reference model of the session log.

Modules, one concept each: ``jsonval`` (the JSON domain), ``rejected`` (the
failure value), ``log`` (events), ``codec`` (log lines), ``surface``, ``derive``,
``header``, ``wire``, ``prefix``, ``loop``, ``meter``, ``compaction``, ``prune``.
"""
