"""sessionspec spec: the rule registry, properties, strategies and state machines.

Importable by other projects: ``spec.registry`` (rules), ``spec.strategies``
(Hypothesis strategies for well-formed logs), ``spec.machines`` (state machines).
"""
