"""Benchmarks: `python -m pytest_harness_audit.bench` prints one table of figures."""
