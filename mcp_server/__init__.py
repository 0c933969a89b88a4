"""ragweb as an MCP server: streamable HTTP at /mcp, authenticated by the personal API tokens.

A protocol adapter over the same services as the REST API, never a copy of them:
- tools.py: what each tool does (list_collections, search, ask, read_passage), plain Django code
  that reads through corpus.permissions only;
- server.py: the official SDK's MCPServer declaring those tools (names, arguments, schemas);
- transport.py: one HTTP request through the SDK's streamable HTTP handling (stateless, JSON
  responses), run from a WSGI thread;
- views.py: the /mcp view (token authentication, then transport).

Nothing imports this package except ragweb.urls (import-linter contract in pyproject.toml).
"""
