"""The MCP server: the official SDK's MCPServer declaring ragweb's four tools (DESIGN.md
"Contracts for sources, filters, tokens and MCP": list_collections, search, ask, read_passage).

The SDK validates the arguments against the signatures below (their types and bounds are the
tools' input schemas); mcp_server.tools does the work. The caller of the HTTP request being served
is in CALLER (set by the /mcp view), and each tool runs on that request's own thread
(sync_to_async, thread-sensitive), so its database work uses the request's connection as any view
does, not a connection opened by a worker thread of the SDK.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Annotated, Any

from asgiref.sync import sync_to_async
from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations
from pydantic import Field

from chat.retrieval.search import MAX_K
from mcp_server import tools

CALLER: ContextVar[tools.Caller] = ContextVar("mcp_caller")

INSTRUCTIONS = (
    "ragweb answers questions from a team's documents. list_collections shows what you may read; "
    "search returns the best chunks and passages (segments of chunks) with their character offsets; ask answers with "
    "[n] citations; read_passage reads a document between character offsets (from search or a citation). "
    "Every result carries a link to the passage in ragweb's web UI.")
READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False)

CollectionSlug = Annotated[str | None, Field(description="Slug of one collection (default: all you may read).")]
Filters = Annotated[dict[str, Any] | None, Field(description=(
    'Document metadata filters: {"media_type": [...], "tags": [...], "source_prefix": str, '
    '"after": "YYYY-MM-DD", "before": "YYYY-MM-DD"}, every key optional.'))]

server = MCPServer(name="ragweb", instructions=INSTRUCTIONS)


async def _run(function, **arguments) -> dict[str, Any]:
    return await sync_to_async(function, thread_sensitive=True)(CALLER.get(), **arguments)


@server.tool(annotations=READ_ONLY)
async def list_collections() -> dict[str, Any]:
    """The document collections you may read: slug, name, description, public."""
    return await _run(tools.list_collections)


@server.tool(annotations=READ_ONLY)
async def search(
    query: Annotated[str, Field(description="What to look for, in words.")],
    collection: CollectionSlug = None,
    k: Annotated[int, Field(ge=1, le=MAX_K, description="How many chunks to return.")] = 10,
    filters: Filters = None,
) -> dict[str, Any]:
    """Hybrid (vector + keyword) search: the k best chunks, best first, and the relevant passages
    (segments of consecutive chunks), as ragweb's REST search returns them. A chunk's start/end and a
    segment's char_start/char_end are character offsets into the document's text (for read_passage);
    a segment's start/end are its chunk indexes (end exclusive)."""
    return await _run(tools.search, query=query, collection=collection, k=k, filters=filters)


@server.tool(annotations=READ_ONLY)
async def ask(
    question: Annotated[str, Field(description="The question, as you would ask a colleague.")],
    collection: CollectionSlug = None,
    filters: Filters = None,
) -> dict[str, Any]:
    """An answer from the documents with [n] citations; each citation has its document, text,
    char_start/char_end and a link to the passage. Nothing found: answer empty, error says so."""
    return await _run(tools.ask, question=question, collection=collection, filters=filters)


@server.tool(annotations=READ_ONLY)
async def read_passage(
    document: Annotated[int, Field(description="The document id (from search or a citation).")],
    start: Annotated[int, Field(description="First character offset.")],
    end: Annotated[int, Field(description=f"Offset after the last character; at most "
                                          f"{tools.MAX_PASSAGE_CHARS} characters per call.")],
) -> dict[str, Any]:
    """The exact text of a document between two character offsets."""
    return await _run(tools.read_passage, document=document, start=start, end=end)
