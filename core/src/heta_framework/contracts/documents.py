"""Documents and chunks as they travel between steps, and the parser protocol.

Steps hand documents to each other through the object store:
``raw/<id>`` (never deleted) -> ``parsed/<id>.json`` -> ``chunks/<id>.json``.
Artifacts carry the *keys* of those objects, so a resumed build reads exactly
what the interrupted one wrote.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

import attrs

from heta_framework.contracts.access import access_list


def _dict(value: Mapping[str, Any] | None) -> dict[str, Any]:
    return dict(value or {})


def content_hash(data: bytes | str) -> str:
    if isinstance(data, str):
        data = data.encode("utf-8")
    return hashlib.sha256(data).hexdigest()


# --- document identity ----------------------------------------------------------------
#
# A document id is any text a user wants (a path, a URL, a title) up to MAX_DOCUMENT_ID_LENGTH
# characters. Ids are compared exactly: "dup", "/dup" and "sub/dir/dup" are three documents.
# Storage never uses the id as a path: ``document_key`` maps it to a file-name-safe key. Ids
# that already are safe keys (lowercase letters, digits, "-" and "_": every id Heta makes
# itself) are their own key, so knowledge bases built before this scheme keep their object
# keys; every other id becomes "_" + a SHA-256 prefix. A plain key never starts with "_", so a
# plain key and a hashed key cannot collide, and lowercase-only keys cannot collide on
# case-insensitive file systems either.

MAX_DOCUMENT_ID_LENGTH = 4096
_PLAIN_KEY = re.compile(r"[a-z0-9][a-z0-9_-]{0,127}")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def document_id_problem(document_id: object) -> str | None:
    """Why ``document_id`` cannot be used, or ``None`` when it can."""
    if not isinstance(document_id, str):
        return f"a document id must be text, got {type(document_id).__name__}"
    if not document_id.strip():
        return "a document id must not be empty or only spaces"
    if len(document_id) > MAX_DOCUMENT_ID_LENGTH:
        return f"a document id must be at most {MAX_DOCUMENT_ID_LENGTH} characters, got {len(document_id)}"
    if _CONTROL.search(document_id):
        return "a document id must not contain NUL or other control characters"
    try:
        document_id.encode("utf-8")
    except UnicodeEncodeError:
        return "a document id must be valid Unicode text (it contains a lone surrogate)"
    if any(part in (".", "..") for part in document_id.replace("\\", "/").split("/")):
        return "a document id must not contain '.' or '..' path segments"
    return None


def check_document_id(document_id: object) -> str:
    """``document_id`` unchanged, or ``InvalidDocumentIdError`` saying what is wrong."""
    from heta_framework.errors import InvalidDocumentIdError

    problem = document_id_problem(document_id)
    if problem is not None:
        raise InvalidDocumentIdError(f"Invalid document id {str(document_id)[:80]!r}: {problem}. Pick another id (SourceDocument(id=...)).")
    return document_id  # type: ignore[return-value]


def document_key(document_id: str) -> str:
    """The storage key of a document (object names, file names): safe, short, collision-free."""
    if _PLAIN_KEY.fullmatch(document_id):
        return document_id
    return "_" + hashlib.sha256(document_id.encode("utf-8")).hexdigest()[:32]


#: where ``split_documents`` keeps each document's chunks in the object store
CHUNKS_PREFIX = "chunks/"


def chunks_key(document_id: str) -> str:
    """The object-store key of a document's chunks (a JSON list), as ``split_documents`` writes them."""
    return f"{CHUNKS_PREFIX}{document_key(document_id)}.json"


@attrs.frozen
class SourceDocument:
    """A document given as content rather than a file path: ``kb.build([SourceDocument(text=..., id=...)])``.

    ``name`` picks the parser by its extension (default ``.txt``).
    """

    text: str | None = None
    data: bytes | None = None
    id: str | None = None
    name: str = "document.txt"
    source: str | None = None
    metadata: Mapping[str, Any] = attrs.field(factory=dict, converter=_dict)
    #: who may read it (``heta_framework.contracts.access``); ``None``: the build's or recipe's default
    access: tuple[str, ...] | None = attrs.field(default=None, converter=access_list)

    def content(self) -> bytes:
        if self.data is not None:
            return self.data
        return (self.text or "").encode("utf-8")


@attrs.frozen
class DocumentRecord:
    """A document the knowledge base knows about (the catalog entry)."""

    id: str
    source: str
    name: str
    content_hash: str
    size: int
    raw_key: str
    metadata: Mapping[str, Any] = attrs.field(factory=dict, converter=_dict)
    state: str = "pending"  # pending -> built; a new build processes every pending document
    #: the source file's modification time (POSIX seconds) when it was read; None for SourceDocuments
    modified: float | None = None
    #: when the knowledge base first took the document in, and last took in new content
    added: float | None = None
    updated: float | None = None
    #: the principals that may read it; ``None``: the recipe's ``[access] default`` (docs/security.md)
    access: tuple[str, ...] | None = attrs.field(default=None, converter=access_list)

    @property
    def from_file(self) -> bool:
        """Read from a file by a folder walk (not a ``SourceDocument``); a file's id hashes its path,
        which also tells catalog entries written before ``modified`` existed."""
        return self.modified is not None or self.id == content_hash(self.source)[:16]

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> DocumentRecord:
        """A catalog entry; keys this version does not know (written by a newer Heta) are ignored."""
        known = {field.name for field in attrs.fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})


@attrs.frozen
class PageSpan:
    #: character offsets in the parsed text (end exclusive) of the text that came from ``page``
    start: int
    end: int
    #: the page number, from 1
    page: int


@attrs.frozen
class ParsedDocument:
    document_id: str
    source: str
    text: str
    pages: tuple[PageSpan, ...] = ()
    metadata: Mapping[str, Any] = attrs.field(factory=dict, converter=_dict)

    def page_at(self, offset: int) -> int | None:
        for span in self.pages:
            if span.start <= offset < span.end:
                return span.page
        return None


def join_pages(pages: Iterable[tuple[int, str]]) -> tuple[str, tuple[PageSpan, ...]]:
    """One text from ``(page number, text)`` pairs in order, a blank line between them, and each page's span in it:
    what a parser of a paged format (PDF, slides, e-book sections, a layout service's pages) returns."""
    pieces: list[str] = []
    spans: list[PageSpan] = []
    offset = 0
    for number, text in pages:
        if pieces:
            pieces.append("\n\n")
            offset += 2
        spans.append(PageSpan(start=offset, end=offset + len(text), page=number))
        pieces.append(text)
        offset += len(text)
    return "".join(pieces), tuple(spans)


@attrs.frozen
class Chunk:
    """A piece of a document with provenance: document, source path, character offsets, page."""

    #: unique in the knowledge base; the fusion key of its search results
    id: str
    document_id: str
    text: str
    #: its position among the document's chunks, from 0
    index: int
    #: character offsets of ``text`` in the parsed document's text (end exclusive)
    start: int
    end: int
    #: the file it came from (a path), or the ``SourceDocument``'s ``source``
    source: str = ""
    #: the page its start lies on (PDF, slides), None when the format has no pages
    page: int | None = None
    #: provenance beyond the page (``sheet``, ``rows``, ``section``, ...) and the document's own metadata
    metadata: Mapping[str, Any] = attrs.field(factory=dict, converter=_dict)

    def provenance(self) -> dict[str, Any]:
        """The metadata a search result carries about where this chunk came from."""
        data: dict[str, Any] = {
            **self.metadata,
            "document_id": self.document_id,
            "source": self.source,
            "chunk_index": self.index,
            "start": self.start,
            "end": self.end,
        }
        if self.page is not None:
            data["page"] = self.page
        return data


@attrs.frozen
class ParseResult:
    """What a parser returns: text and page spans. ``warnings`` become ``StepIssue``s."""

    text: str
    pages: tuple[PageSpan, ...] = ()
    metadata: Mapping[str, Any] = attrs.field(factory=dict, converter=_dict)
    #: (code, message) pairs: problems the parser worked around (text kept with replacement characters)
    warnings: tuple[tuple[str, str], ...] = ()
    #: pages whose text is only in an image (an image file, a scanned PDF page): ParseDocuments has
    #: a vision model or OCR read them and puts their text in at their page
    images: tuple[PageImage, ...] = ()


@attrs.frozen
class PageImage:
    """The image of one page, for a vision model or OCR to read."""

    page: int
    data: bytes = attrs.field(repr=lambda data: f"<{len(data)} bytes>")
    media_type: str = "image/png"


class DocumentParseError(Exception):
    """Raised by a parser for a document it cannot read; becomes an issue with ``code`` (``corrupt_document``
    unless the parser knows better: a layout service that timed out, a converter that is not installed).

    ``outcome`` says what happens to the document and what the user can do, in the issue. ``retry``: the
    cause may pass (a service that timed out), so the document stays pending and the next build tries again.
    """

    code = "corrupt_document"
    outcome = "Not indexed."
    retry = False

    def __init__(self, message: str = "", *, code: str | None = None, outcome: str | None = None, retry: bool | None = None):
        super().__init__(message)
        if code is not None:
            self.code = code
        if outcome is not None:
            self.outcome = outcome
        if retry is not None:
            self.retry = retry


@attrs.frozen
class DocumentParser:
    """What ``register_parsers`` registers. ``parse(data, name)`` gets the raw bytes and file name.

    A parser that needs settings (a service's address) has a ``config_type`` (an attrs class, as
    store types have) and ``configure``: the recipe's ``[parsers.documents.options.<name>]`` table,
    structured into ``config_type``, and the parsers it stands in front of (a ``ParserSet``, to fall
    back on) give the parser that is used. It may register no extensions of its own, so that
    installing it changes nothing until the recipe configures it.
    """

    name: str
    extensions: tuple[str, ...]
    parse: Callable[[bytes, str], ParseResult]
    description: str = ""
    config_type: type | None = None
    configure: Callable[[Any, ParserSet], DocumentParser] | None = attrs.field(default=None, eq=False, repr=False)


class ParserSet:
    """The ``parsers.documents`` component: picks a parser by file extension (a later parser wins an extension)."""

    def __init__(self, parsers: Iterable[DocumentParser]):
        self._by_extension: dict[str, DocumentParser] = {}
        for parser in parsers:
            for extension in parser.extensions:
                self._by_extension[extension.lower()] = parser

    def for_name(self, name: str) -> DocumentParser | None:
        lowered = name.lower()
        # longest extension first so ".tar.gz"-style names resolve sensibly
        for extension in sorted(self._by_extension, key=len, reverse=True):
            if lowered.endswith(extension):
                return self._by_extension[extension]
        return None

    @property
    def extensions(self) -> list[str]:
        return sorted(self._by_extension)

    def extensions_of(self, parser_name: str) -> list[str]:
        """The extensions the parser called ``parser_name`` handles here (none if another parser took them all)."""
        return sorted(extension for extension, parser in self._by_extension.items() if parser.name == parser_name)


# --- reading what earlier steps wrote ------------------------------------------------

def chunk_to_dict(chunk: Chunk) -> dict[str, Any]:
    return attrs.asdict(chunk)


def chunk_from_dict(data: Mapping[str, Any]) -> Chunk:
    return Chunk(**data)


def document_chunks(objects: Any, document_id: str) -> list[Chunk]:
    """One document's chunks in order, as ``split_documents`` stored them; ``[]`` when it has none (never split, or removed)."""
    key = chunks_key(document_id)
    return [chunk_from_dict(data) for data in objects.get_json(key)] if objects.exists(key) else []


def iter_chunks(objects: Any, chunk_keys: Iterable[str]) -> Iterator[Chunk]:
    """Every chunk stored under ``chunk_keys`` in the object store, in order."""
    for key in chunk_keys:
        for data in objects.get_json(key):
            yield chunk_from_dict(data)


def parsed_from_dict(data: Mapping[str, Any]) -> ParsedDocument:
    return ParsedDocument(
        document_id=data["document_id"],
        source=data["source"],
        text=data["text"],
        pages=tuple(PageSpan(**p) for p in data.get("pages", ())),
        metadata=data.get("metadata", {}),
    )
