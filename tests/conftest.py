"""Loaded by every pytest process at start-up, the xdist controller included."""

# The reliability suites' counters must reach the controller's terminal summary; the
# controller never imports tests/reliability/conftest.py, so the reporter is a plugin here.
pytest_plugins = ("reliability.counts_plugin",)
