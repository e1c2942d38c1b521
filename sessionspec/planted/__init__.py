"""Planted faults: deliberately broken variants of model functions (the loop's
machine mutants and the conformance kit's mutant adapters), kept out of
``model/`` and installed by the caller (see :mod:`sessionspec.planted.loop`)."""
