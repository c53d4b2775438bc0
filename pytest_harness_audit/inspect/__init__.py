"""Inspect what a call did: workspace effects and secret exposure."""
