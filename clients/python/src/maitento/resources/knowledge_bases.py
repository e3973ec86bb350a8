"""`mt.knowledge_bases`: documents split into passages that tools (and people) search (docs/knowledge-bases.md)."""

from __future__ import annotations

import builtins
from typing import TYPE_CHECKING

from .._base import path, with_query, without_none
from ..models import KnowledgeBase, KnowledgeDocument, KnowledgeSearch, KnowledgeSearchResult

if TYPE_CHECKING:
    from .._client import AsyncAPIClient, SyncAPIClient


def _document_route(knowledge_base_id: str, name: str) -> str:
    return with_query(path("/v1/knowledge-bases/{}/documents", knowledge_base_id), {"name": name})


def _document_body(content_type: str, content: bytes | str) -> tuple[bytes, dict[str, str]]:
    data = content.encode() if isinstance(content, str) else bytes(content)
    return data, {"content-type": content_type}


class KnowledgeBases:
    """`mt.knowledge_bases`: knowledge bases of the namespace, their documents, and search."""

    def __init__(self, client: SyncAPIClient) -> None:
        self._client = client

    def create(self, *, name: str, description: str | None = None, language: str | None = None) -> KnowledgeBase:
        """Creates a knowledge base (admin); `language` is a text search configuration (`english` by default)."""
        body = without_none({"name": name, "description": description, "language": language})
        return KnowledgeBase.model_validate(self._client.request("POST", "/v1/knowledge-bases", body))

    def list(self) -> builtins.list[KnowledgeBase]:
        """The knowledge bases of the namespace, in name order."""
        return [KnowledgeBase.model_validate(x) for x in self._client.request("GET", "/v1/knowledge-bases")]

    def get(self, knowledge_base_id: str) -> KnowledgeBase:
        """One knowledge base, with how many documents and passages it holds."""
        route = path("/v1/knowledge-bases/{}", knowledge_base_id)
        return KnowledgeBase.model_validate(self._client.request("GET", route))

    def delete(self, knowledge_base_id: str) -> None:
        """Deletes a knowledge base with its documents (admin)."""
        self._client.request("DELETE", path("/v1/knowledge-bases/{}", knowledge_base_id))

    def add_document(
        self, knowledge_base_id: str, *, name: str, content_type: str, content: bytes | str
    ) -> KnowledgeDocument:
        """Adds a document, or replaces the one of the same name (admin). `content_type` is `text/plain`,
        `text/markdown`, `text/html` or `application/pdf`; text is sent as UTF-8."""
        data, headers = _document_body(content_type, content)
        response = self._client.send("POST", _document_route(knowledge_base_id, name), content=data, headers=headers)
        return KnowledgeDocument.model_validate_json(response.content)

    def list_documents(self, knowledge_base_id: str) -> builtins.list[KnowledgeDocument]:
        """The documents of a knowledge base, in name order."""
        data = self._client.request("GET", path("/v1/knowledge-bases/{}/documents", knowledge_base_id))
        return [KnowledgeDocument.model_validate(x) for x in data]

    def get_document(self, knowledge_base_id: str, document_id: str) -> KnowledgeDocument:
        """One document of a knowledge base."""
        route = path("/v1/knowledge-bases/{}/documents/{}", knowledge_base_id, document_id)
        return KnowledgeDocument.model_validate(self._client.request("GET", route))

    def delete_document(self, knowledge_base_id: str, document_id: str) -> None:
        """Deletes one document of a knowledge base (admin)."""
        self._client.request("DELETE", path("/v1/knowledge-bases/{}/documents/{}", knowledge_base_id, document_id))

    def search(
        self, knowledge_base_id: str, *, query: str, limit: int | None = None
    ) -> builtins.list[KnowledgeSearchResult]:
        """The passages that best answer `query`, best first (at most `limit`, default 5)."""
        route = path("/v1/knowledge-bases/{}/search", knowledge_base_id)
        data = self._client.request("POST", route, without_none({"query": query, "limit": limit}))
        return KnowledgeSearch.model_validate(data).results


class AsyncKnowledgeBases:
    """`mt.knowledge_bases` of `AsyncMaitento`: `KnowledgeBases`, awaited."""

    def __init__(self, client: AsyncAPIClient) -> None:
        self._client = client

    async def create(
        self, *, name: str, description: str | None = None, language: str | None = None
    ) -> KnowledgeBase:
        """Creates a knowledge base (admin); `language` is a text search configuration (`english` by default)."""
        body = without_none({"name": name, "description": description, "language": language})
        return KnowledgeBase.model_validate(await self._client.request("POST", "/v1/knowledge-bases", body))

    async def list(self) -> builtins.list[KnowledgeBase]:
        """The knowledge bases of the namespace, in name order."""
        return [KnowledgeBase.model_validate(x) for x in await self._client.request("GET", "/v1/knowledge-bases")]

    async def get(self, knowledge_base_id: str) -> KnowledgeBase:
        """One knowledge base, with how many documents and passages it holds."""
        route = path("/v1/knowledge-bases/{}", knowledge_base_id)
        return KnowledgeBase.model_validate(await self._client.request("GET", route))

    async def delete(self, knowledge_base_id: str) -> None:
        """Deletes a knowledge base with its documents (admin)."""
        await self._client.request("DELETE", path("/v1/knowledge-bases/{}", knowledge_base_id))

    async def add_document(
        self, knowledge_base_id: str, *, name: str, content_type: str, content: bytes | str
    ) -> KnowledgeDocument:
        """Adds a document, or replaces the one of the same name (admin). `content_type` is `text/plain`,
        `text/markdown`, `text/html` or `application/pdf`; text is sent as UTF-8."""
        data, headers = _document_body(content_type, content)
        route = _document_route(knowledge_base_id, name)
        response = await self._client.send("POST", route, content=data, headers=headers)
        return KnowledgeDocument.model_validate_json(response.content)

    async def list_documents(self, knowledge_base_id: str) -> builtins.list[KnowledgeDocument]:
        """The documents of a knowledge base, in name order."""
        data = await self._client.request("GET", path("/v1/knowledge-bases/{}/documents", knowledge_base_id))
        return [KnowledgeDocument.model_validate(x) for x in data]

    async def get_document(self, knowledge_base_id: str, document_id: str) -> KnowledgeDocument:
        """One document of a knowledge base."""
        route = path("/v1/knowledge-bases/{}/documents/{}", knowledge_base_id, document_id)
        return KnowledgeDocument.model_validate(await self._client.request("GET", route))

    async def delete_document(self, knowledge_base_id: str, document_id: str) -> None:
        """Deletes one document of a knowledge base (admin)."""
        route = path("/v1/knowledge-bases/{}/documents/{}", knowledge_base_id, document_id)
        await self._client.request("DELETE", route)

    async def search(
        self, knowledge_base_id: str, *, query: str, limit: int | None = None
    ) -> builtins.list[KnowledgeSearchResult]:
        """The passages that best answer `query`, best first (at most `limit`, default 5)."""
        route = path("/v1/knowledge-bases/{}/search", knowledge_base_id)
        data = await self._client.request("POST", route, without_none({"query": query, "limit": limit}))
        return KnowledgeSearch.model_validate(data).results
