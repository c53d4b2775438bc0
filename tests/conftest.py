"""Loaded by every pytest process at start-up, the xdist controller included."""

import os
import tempfile

# The reliability suites' counters must reach the controller's terminal summary; the
# controller never imports tests/reliability/conftest.py, so the reporter is a plugin here.
pytest_plugins = ("reliability.counts_plugin",)

# Hook processes started by any test keep their continuity witnesses in a temporary folder,
# not in the user's state directory (xdist workers inherit it from the controller).
os.environ.setdefault(
    "HARNESS_AUDIT_WITNESS_DIR", tempfile.mkdtemp(prefix="harness-audit-witness-")
)
