# CrossHair plugin file (crosshair check --extra_plugin proofs/plugin.py); see proofs/json_plugin.py and proofs/limits.py.
import proofs.json_plugin
import proofs.limits

proofs.json_plugin.install()
proofs.limits.install_from_env()
