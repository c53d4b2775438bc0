"""Reference agents that drive a harness through MCP, for examples and tests."""
