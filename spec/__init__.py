"""sessionspec spec: the rule registry, properties, strategies and state machines.

Importable by other projects: ``spec.registry`` (rules), the Hypothesis strategies
(``spec.log_strategies`` for well-formed logs, ``spec.header_strategies``, ``spec.json_strategies``)
with the log builder they use (``spec.log_builder``), and ``spec.machines`` (state machines).
"""
