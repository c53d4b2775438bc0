"""The doors through which tool calls reach the gate: scripted calls and scenarios, the MCP
proxy, host hooks, social sends and agent runs (DESIGN §2)."""
