"""Readers of the verified chain: verdict, expectations, trajectory, session report, snapshot."""
