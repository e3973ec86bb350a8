"""Knowledge bases and file systems through the SDK against the real `mt serve`: a Markdown document is found by
search; files keep their bytes, page, move, and refuse a write at a stale ETag with `PreconditionFailedError`."""

from __future__ import annotations

import asyncio
import secrets

import pytest

from maitento import AsyncMaitento, ConflictError, Maitento, NotFoundError, PreconditionFailedError

from .conftest import Stack

HANDBOOK = """# Leave

## Parental leave

Parents get sixteen weeks of parental leave at full pay, taken within the child's first year.

## Holidays

Everyone has twenty-five days of holidays a year.
"""

# Bytes that are not UTF-8 text, with a NUL and every byte value once.
BINARY = bytes(range(256)) + b"\x00\xff\xfe"


def test_knowledge_base_document_is_found_by_search(mt: Maitento) -> None:
    kb = mt.knowledge_bases.create(name="handbook-" + secrets.token_hex(4), description="The handbook")
    try:
        document = mt.knowledge_bases.add_document(
            kb.id, name="leave.md", content_type="text/markdown", content=HANDBOOK
        )
        assert (document.name, document.content_type, document.bytes) == (
            "leave.md", "text/markdown", len(HANDBOOK.encode()),
        )
        assert document.chunk_count >= 2
        assert [d.id for d in mt.knowledge_bases.list_documents(kb.id)] == [document.id]
        assert mt.knowledge_bases.get_document(kb.id, document.id).name == "leave.md"
        assert mt.knowledge_bases.get(kb.id).document_count == 1
        assert kb.id in [k.id for k in mt.knowledge_bases.list()]

        results = mt.knowledge_bases.search(kb.id, query="How long is parental leave?", limit=3)
        assert results, "the search found nothing"
        best = results[0]
        assert "sixteen weeks" in best.text
        assert best.title == "Leave > Parental leave"
        assert best.document.id == document.id

        mt.knowledge_bases.delete_document(kb.id, document.id)
        assert mt.knowledge_bases.search(kb.id, query="parental leave") == []
    finally:
        mt.knowledge_bases.delete(kb.id)
    with pytest.raises(NotFoundError) as missing:
        mt.knowledge_bases.get(kb.id)
    assert missing.value.code == "api:knowledge:not-found"


def test_files_keep_their_bytes_page_move_and_check_etags(mt: Maitento) -> None:
    fs = mt.file_systems.create(name="notes-" + secrets.token_hex(4))
    try:
        info = mt.file_systems.write(fs.id, "data/blob.bin", BINARY)
        assert (info.path, info.size, info.content_type) == ("data/blob.bin", len(BINARY), "application/octet-stream")
        note = mt.file_systems.write(fs.id, "notes/a.md", "# A\n\nfirst", content_type="text/markdown")
        mt.file_systems.write_text(fs.id, path="notes/b.txt", content="b")

        read = mt.file_systems.read(fs.id, "data/blob.bin")
        assert read.content == BINARY
        assert read.etag == info.etag
        assert read.content_type == "application/octet-stream"
        text = mt.file_systems.read(fs.id, "notes/a.md")
        assert (text.text, text.content_type) == ("# A\n\nfirst", "text/markdown")

        # One file a page: iter_files follows the cursors.
        first = mt.file_systems.list_files(fs.id, limit=1)
        assert [f.path for f in first.files] == ["data/blob.bin"] and first.next_cursor is not None
        assert [f.path for f in mt.file_systems.iter_files(fs.id, limit=1)] == [
            "data/blob.bin", "notes/a.md", "notes/b.txt",
        ]
        assert [f.path for f in mt.file_systems.iter_files(fs.id, prefix="notes/")] == ["notes/a.md", "notes/b.txt"]
        assert mt.file_systems.get(fs.id).files == 3

        # A write at the ETag read succeeds once; the same ETag again is stale.
        second = mt.file_systems.write(fs.id, "notes/a.md", "second", content_type="text/markdown",
                                       if_match=note.etag)
        assert second.etag != note.etag
        with pytest.raises(PreconditionFailedError) as stale:
            mt.file_systems.write(fs.id, "notes/a.md", "third", if_match=note.etag)
        assert (stale.value.code, stale.value.status) == ("api:files:precondition-failed", 412)
        with pytest.raises(PreconditionFailedError):
            mt.file_systems.write(fs.id, "notes/a.md", "new", if_none_match=True)
        with pytest.raises(PreconditionFailedError):
            mt.file_systems.delete_file(fs.id, "notes/a.md", if_match=note.etag)
        assert mt.file_systems.read(fs.id, "notes/a.md").text == "second"

        moved = mt.file_systems.move(fs.id, from_="notes/a.md", to="archive/a.md")
        assert (moved.path, moved.etag) == ("archive/a.md", second.etag)
        with pytest.raises(ConflictError) as exists:
            mt.file_systems.move(fs.id, from_="notes/b.txt", to="archive/a.md")
        assert exists.value.code == "api:files:exists"

        mt.file_systems.delete_file(fs.id, "archive/a.md", if_match=second.etag)
        with pytest.raises(NotFoundError) as gone:
            mt.file_systems.read(fs.id, "archive/a.md")
        assert gone.value.code == "api:files:not-found"
        assert [f.path for f in mt.file_systems.iter_files(fs.id)] == ["data/blob.bin", "notes/b.txt"]
    finally:
        mt.file_systems.delete(fs.id)
    assert fs.id not in [f.id for f in mt.file_systems.list()]


def test_async_knowledge_bases_and_files(stack: Stack) -> None:
    async def scenario() -> None:
        async with AsyncMaitento(stack.url, stack.key) as mt:
            kb = await mt.knowledge_bases.create(name="async-kb-" + secrets.token_hex(4))
            await mt.knowledge_bases.add_document(
                kb.id, name="leave.md", content_type="text/markdown", content=HANDBOOK.encode()
            )
            results = await mt.knowledge_bases.search(kb.id, query="holidays")
            assert results and "twenty-five days" in results[0].text
            await mt.knowledge_bases.delete(kb.id)

            fs = await mt.file_systems.create(name="async-fs-" + secrets.token_hex(4))
            info = await mt.file_systems.write(fs.id, "x/blob.bin", BINARY, if_none_match=True)
            await mt.file_systems.write(fs.id, "x/y.txt", "y")
            assert (await mt.file_systems.read(fs.id, "x/blob.bin")).content == BINARY
            assert [f.path async for f in mt.file_systems.iter_files(fs.id, limit=1)] == ["x/blob.bin", "x/y.txt"]
            with pytest.raises(PreconditionFailedError) as stale:
                await mt.file_systems.write(fs.id, "x/blob.bin", b"other", if_match='"0000"')
            assert stale.value.code == "api:files:precondition-failed"
            await mt.file_systems.delete_file(fs.id, "x/blob.bin", if_match=info.etag)
            await mt.file_systems.delete(fs.id)

    asyncio.run(scenario())
