"""Planted faults for the CrossHair contracts (never normative code, never in model/).

Each fault is a broken variant of the loop (or of a model function) installed by
patching the names the loop looks up, for the duration of one call; the model's
functions take no fault parameter.  See :mod:`proofs.planted.faults`.
"""
