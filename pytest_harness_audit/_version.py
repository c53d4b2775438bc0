"""The package version, in one place (read by the package, the proxy and the build)."""

__version__ = "0.1.0"
