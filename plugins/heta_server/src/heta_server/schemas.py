"""Request bodies of the HTTP API (pydantic models: FastAPI validates them and lists them in the OpenAPI schema).

Field names of ``SearchRequest`` are the Hebb Mind spec's (``query``, ``top_k``,
``weight_recency``, ``weight_importance``, ``weight_relevance``): public API.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class QueryBody(BaseModel):
    """``POST /api/v1/query``: any mode, every option, filters, trace, answer."""

    model_config = ConfigDict(extra="forbid")

    text: str
    mode: str | None = Field(default=None, description="a query mode (GET /api/v1/modes); default: the best available")
    top_k: int = 10
    filters: dict[str, Any] = Field(default_factory=dict)
    options: dict[str, Any] = Field(default_factory=dict)
    trace: bool = False
    answer: bool = Field(default=False, description="write a grounded answer with citations (needs models.language)")
    stream: bool = Field(
        default=False,
        description="answer as Server-Sent Events: results, then the answer's tokens as the model writes them, then a done (or error) event",
    )


class SearchBody(BaseModel):
    """``POST /api/v1/search``: Hebb Mind memory search (the ``memory_search`` mode)."""

    model_config = ConfigDict(extra="forbid")

    query: str
    top_k: int = 10
    weight_recency: float | None = None
    weight_importance: float | None = None
    weight_relevance: float | None = None
    tags: list[str] | None = None
    filters: dict[str, Any] = Field(default_factory=dict)
    rerank: bool | None = None
    related: bool | None = None
    update_access: bool | None = None


class DocumentBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: str
    id: str | None = None
    name: str = Field(default="document.txt", description="its extension picks the parser")
    metadata: dict[str, Any] = Field(default_factory=dict)
    importance: float | None = Field(default=None, description="0-10; memory_search's importance")
    tags: list[str] | None = None
    access: list[str] | None = Field(
        default=None, description="who may read it (principals; \"public\": everyone); default: the recipe's [access] default"
    )


class AddDocumentsBody(BaseModel):
    """``POST /api/v1/documents``: text documents, built in the background."""

    model_config = ConfigDict(extra="forbid")

    documents: list[DocumentBody] = Field(min_length=1)


class RemoveDocumentsBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    ids: list[str] = Field(min_length=1)


class AccessBody(BaseModel):
    """``PUT /api/v1/documents/{id}/access``: the document's new access list; ``null``: the recipe's default."""

    model_config = ConfigDict(extra="forbid")

    access: list[str] | None
