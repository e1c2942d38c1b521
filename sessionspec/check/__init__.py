"""The log checker: reading log files, auditing them against the rule book, reporting verdicts."""
