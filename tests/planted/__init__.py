"""Planted-bug variants of contracted model functions (issue 7).

Each module copies one contracted function of ``model/`` with its PEP 316
contract unchanged and one deliberate bug.  ``tests/proofs/test_proofs.py`` runs
CrossHair on them and asserts it *refutes* the contract: evidence that the
contracts on the real functions can fail, so "no counterexample" means
something.  These files are never imported by the model.
"""
