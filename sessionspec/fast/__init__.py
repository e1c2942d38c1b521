"""Fast paths: optimized equivalents of normative definitions of ``model/``.

Each is tied to its definition by a Hypothesis property (tests/fast/test_fast.py,
tests/fast/test_incremental.py); ``model/`` never imports this package.
"""
