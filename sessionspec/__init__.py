"""The sessionspec tool: the command line and what it runs over the normative model.

``model/`` is the executable meaning (normative definitions only); ``spec/`` holds the rule
registry, rule book, properties, strategies and state machines.  This package is the tooling
built on them: ``check`` (the log checker and its audits), ``replay``, ``conformance`` (vectors,
the adapter protocol, ``conform``, ``serve-model``, mutants) and ``generate``.
"""
