# CrossHair plugin file for runs without symbolic JSON (tests/planted/): only the iteration bound of proofs/limits.py.
import proofs.limits

proofs.limits.install_from_env()
