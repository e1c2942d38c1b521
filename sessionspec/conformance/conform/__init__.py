"""``sessionspec conform``: differential testing of an adapter against the model.  The trace generator
(traces), the Hypothesis search and the divergence it reports (search), every trace of a small scope
(exhaustive), the rule a divergence breaks (rules), what a run exercised (coverage), the command line (cli)."""
