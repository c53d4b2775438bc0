"""Allow ``python -m pytest_harness_audit``."""

from pytest_harness_audit.cli import main

raise SystemExit(main())
