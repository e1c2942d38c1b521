"""Optimized equivalents of model definitions, each checked against its definition by tests."""
