"""CrossHair support for the model's contracts (issue 18): the JSON plugin, strict
callee contracts, scenario-shape and log-skeleton contracts, planted loop faults.

Nothing here is normative: it is test scaffolding for ``proofs/run``.
"""
