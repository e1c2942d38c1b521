# CrossHair plugin file (crosshair check --extra_plugin proofs/plugin.py); see proofs/json_plugin.py.
import proofs.json_plugin

proofs.json_plugin.install()
