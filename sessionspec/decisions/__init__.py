"""Which runs pin which decision of the model (issue 43): recording the pins (``record``) and the trace hook
conform can call (``trace``).  The decisions are named by spec/decision_points.py, counted by
spec/decision_probe.py, and tabled by spec/decision_table.py (docs/decisions.md)."""
