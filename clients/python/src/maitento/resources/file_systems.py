"""`mt.file_systems`: file systems of the namespace and their files by path, text or binary
(docs/file-systems.md)."""

from __future__ import annotations

import builtins
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

import httpx

from .._base import path, with_query, without_none
from ..models import FileInfo, FilePage, FileSystem

if TYPE_CHECKING:
    from .._client import AsyncAPIClient, SyncAPIClient

DEFAULT_CONTENT_TYPE = "application/octet-stream"


@dataclass(frozen=True)
class FileContent:
    """A file read back: its bytes, with the content type it was written with and its ETag (for `if_match`)."""

    content: bytes
    content_type: str
    etag: str

    @property
    def text(self) -> str:
        """The content as UTF-8 text."""
        return self.content.decode("utf-8")


def _file_route(file_system_id: str, file_path: str) -> str:
    # The file's path is one segment of the URL (`/` sent as %2F); the server reads the whole path.
    return path("/v1/file-systems/{}/files/{}", file_system_id, file_path)


def _files_route(file_system_id: str, prefix: str | None, limit: int | None, cursor: str | None) -> str:
    route = path("/v1/file-systems/{}/files", file_system_id)
    return with_query(route, {"prefix": prefix, "limit": limit, "cursor": cursor})


def _write_request(
    content: bytes | str, content_type: str | None, if_match: str | None, if_none_match: bool
) -> tuple[bytes, dict[str, str]]:
    headers = {"content-type": content_type or DEFAULT_CONTENT_TYPE}
    if if_match is not None:
        headers["if-match"] = if_match
    if if_none_match:
        headers["if-none-match"] = "*"
    return (content.encode() if isinstance(content, str) else bytes(content)), headers


def _if_match(if_match: str | None) -> dict[str, str]:
    return {} if if_match is None else {"if-match": if_match}


def _file_content(response: httpx.Response) -> FileContent:
    return FileContent(
        content=response.content,
        content_type=response.headers.get("content-type", DEFAULT_CONTENT_TYPE),
        etag=response.headers.get("etag", ""),
    )


def _write_text_body(file_path: str, content: str, content_type: str | None, if_match: str | None) -> dict[str, str]:
    return without_none({"path": file_path, "content": content, "contentType": content_type, "ifMatch": if_match})


def _move_body(from_: str, to: str, overwrite: bool | None) -> dict[str, object]:
    return without_none({"from": from_, "to": to, "overwrite": overwrite})


class FileSystems:
    """`mt.file_systems`: file systems and their files; a write can require the ETag it replaces."""

    def __init__(self, client: SyncAPIClient) -> None:
        self._client = client

    def create(self, *, name: str, description: str | None = None) -> FileSystem:
        """Creates a file system (admin); its `id` is what a run binds as `fileSystemId`."""
        body = without_none({"name": name, "description": description})
        return FileSystem.model_validate(self._client.request("POST", "/v1/file-systems", body))

    def list(self) -> builtins.list[FileSystem]:
        """The file systems of the namespace, by name."""
        return [FileSystem.model_validate(x) for x in self._client.request("GET", "/v1/file-systems")]

    def get(self, file_system_id: str) -> FileSystem:
        """One file system, with how many files and bytes it holds."""
        return FileSystem.model_validate(self._client.request("GET", path("/v1/file-systems/{}", file_system_id)))

    def delete(self, file_system_id: str) -> None:
        """Deletes a file system and every file in it (admin)."""
        self._client.request("DELETE", path("/v1/file-systems/{}", file_system_id))

    def list_files(
        self, file_system_id: str, *, prefix: str | None = None, limit: int | None = None, cursor: str | None = None
    ) -> FilePage:
        """One page of the files whose path starts with `prefix`, in byte order of the paths; pass the page's
        `next_cursor` as `cursor` for the next."""
        return FilePage.model_validate(self._client.request("GET", _files_route(file_system_id, prefix, limit, cursor)))

    def iter_files(self, file_system_id: str, *, prefix: str | None = None, limit: int | None = None) -> Iterator[FileInfo]:
        """Every file whose path starts with `prefix`, page after page (`limit` files a page)."""
        cursor: str | None = None
        while True:
            page = self.list_files(file_system_id, prefix=prefix, limit=limit, cursor=cursor)
            yield from page.files
            if page.next_cursor is None:
                return
            cursor = page.next_cursor

    def write(
        self,
        file_system_id: str,
        file_path: str,
        content: bytes | str,
        *,
        content_type: str | None = None,
        if_match: str | None = None,
        if_none_match: bool = False,
    ) -> FileInfo:
        """Creates or replaces the file at `file_path` byte for byte (text as UTF-8; `content_type` default
        application/octet-stream). `if_match`: only over the file at that ETag (`*`: any existing file);
        `if_none_match`: only a new file; else `PreconditionFailedError` (`api:files:precondition-failed`)."""
        data, headers = _write_request(content, content_type, if_match, if_none_match)
        response = self._client.send("PUT", _file_route(file_system_id, file_path), content=data, headers=headers)
        return FileInfo.model_validate_json(response.content)

    def write_text(
        self,
        file_system_id: str,
        *,
        path: str,
        content: str,
        content_type: str | None = None,
        if_match: str | None = None,
    ) -> FileInfo:
        """Creates or replaces a text file from JSON, as a tool does (default text/plain; charset=utf-8)."""
        body = _write_text_body(path, content, content_type, if_match)
        route = _files_route(file_system_id, None, None, None)
        return FileInfo.model_validate(self._client.request("POST", route, body))

    def read(self, file_system_id: str, file_path: str) -> FileContent:
        """Reads the file at `file_path`: its bytes, content type and ETag."""
        response = self._client.send("GET", _file_route(file_system_id, file_path), headers={"accept": "*/*"})
        return _file_content(response)

    def delete_file(self, file_system_id: str, file_path: str, *, if_match: str | None = None) -> None:
        """Deletes the file at `file_path` (only at the ETag `if_match` when given)."""
        self._client.send("DELETE", _file_route(file_system_id, file_path), headers=_if_match(if_match))

    def move(self, file_system_id: str, *, from_: str, to: str, overwrite: bool | None = None) -> FileInfo:
        """Moves (renames) a file; a file already at `to` is replaced only with `overwrite=True` (else
        `ConflictError`, `api:files:exists`)."""
        route = path("/v1/file-systems/{}/move", file_system_id)
        return FileInfo.model_validate(self._client.request("POST", route, _move_body(from_, to, overwrite)))


class AsyncFileSystems:
    """`mt.file_systems` of `AsyncMaitento`: `FileSystems`, awaited (`iter_files` with `async for`)."""

    def __init__(self, client: AsyncAPIClient) -> None:
        self._client = client

    async def create(self, *, name: str, description: str | None = None) -> FileSystem:
        """Creates a file system (admin); its `id` is what a run binds as `fileSystemId`."""
        body = without_none({"name": name, "description": description})
        return FileSystem.model_validate(await self._client.request("POST", "/v1/file-systems", body))

    async def list(self) -> builtins.list[FileSystem]:
        """The file systems of the namespace, by name."""
        return [FileSystem.model_validate(x) for x in await self._client.request("GET", "/v1/file-systems")]

    async def get(self, file_system_id: str) -> FileSystem:
        """One file system, with how many files and bytes it holds."""
        route = path("/v1/file-systems/{}", file_system_id)
        return FileSystem.model_validate(await self._client.request("GET", route))

    async def delete(self, file_system_id: str) -> None:
        """Deletes a file system and every file in it (admin)."""
        await self._client.request("DELETE", path("/v1/file-systems/{}", file_system_id))

    async def list_files(
        self, file_system_id: str, *, prefix: str | None = None, limit: int | None = None, cursor: str | None = None
    ) -> FilePage:
        """One page of the files whose path starts with `prefix`, in byte order of the paths; pass the page's
        `next_cursor` as `cursor` for the next."""
        route = _files_route(file_system_id, prefix, limit, cursor)
        return FilePage.model_validate(await self._client.request("GET", route))

    async def iter_files(
        self, file_system_id: str, *, prefix: str | None = None, limit: int | None = None
    ) -> AsyncIterator[FileInfo]:
        """Every file whose path starts with `prefix`, page after page (`limit` files a page)."""
        cursor: str | None = None
        while True:
            page = await self.list_files(file_system_id, prefix=prefix, limit=limit, cursor=cursor)
            for info in page.files:
                yield info
            if page.next_cursor is None:
                return
            cursor = page.next_cursor

    async def write(
        self,
        file_system_id: str,
        file_path: str,
        content: bytes | str,
        *,
        content_type: str | None = None,
        if_match: str | None = None,
        if_none_match: bool = False,
    ) -> FileInfo:
        """Creates or replaces the file at `file_path` byte for byte (text as UTF-8; `content_type` default
        application/octet-stream). `if_match`: only over the file at that ETag (`*`: any existing file);
        `if_none_match`: only a new file; else `PreconditionFailedError` (`api:files:precondition-failed`)."""
        data, headers = _write_request(content, content_type, if_match, if_none_match)
        route = _file_route(file_system_id, file_path)
        response = await self._client.send("PUT", route, content=data, headers=headers)
        return FileInfo.model_validate_json(response.content)

    async def write_text(
        self,
        file_system_id: str,
        *,
        path: str,
        content: str,
        content_type: str | None = None,
        if_match: str | None = None,
    ) -> FileInfo:
        """Creates or replaces a text file from JSON, as a tool does (default text/plain; charset=utf-8)."""
        body = _write_text_body(path, content, content_type, if_match)
        route = _files_route(file_system_id, None, None, None)
        return FileInfo.model_validate(await self._client.request("POST", route, body))

    async def read(self, file_system_id: str, file_path: str) -> FileContent:
        """Reads the file at `file_path`: its bytes, content type and ETag."""
        route = _file_route(file_system_id, file_path)
        return _file_content(await self._client.send("GET", route, headers={"accept": "*/*"}))

    async def delete_file(self, file_system_id: str, file_path: str, *, if_match: str | None = None) -> None:
        """Deletes the file at `file_path` (only at the ETag `if_match` when given)."""
        await self._client.send("DELETE", _file_route(file_system_id, file_path), headers=_if_match(if_match))

    async def move(self, file_system_id: str, *, from_: str, to: str, overwrite: bool | None = None) -> FileInfo:
        """Moves (renames) a file; a file already at `to` is replaced only with `overwrite=True` (else
        `ConflictError`, `api:files:exists`)."""
        route = path("/v1/file-systems/{}/move", file_system_id)
        return FileInfo.model_validate(await self._client.request("POST", route, _move_body(from_, to, overwrite)))
