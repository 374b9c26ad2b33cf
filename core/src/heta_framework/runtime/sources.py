"""The source walk: files, folders and ``SourceDocument``s -> documents to ingest, plus what was skipped.

Rules (docs/concepts.md, "Which files a build reads"):

- A folder is walked recursively in name order. Names starting with ``.`` (hidden files and
  folders such as ``.git``) inside a folder are skipped with a ``hidden_file_skipped`` issue;
  a hidden file named directly (``kb.build([".notes.txt"])``) is read.
- Symbolic links are followed, to files and to folders. A file's identity is its resolved path,
  so a file reached through a link and directly is one document. A link that leads back into a
  folder being walked (a loop) is a ``symlink_loop`` issue and is not followed; a link to
  nothing is a ``broken_symlink`` issue; a folder reached a second time through another link
  is not walked twice.
- Only regular files are read: FIFOs, sockets and devices are a ``not_a_regular_file`` issue
  (a FIFO is never opened: reading it would block the build).
- A file or folder that cannot be read (permission denied, I/O error) is an ``unreadable_file``
  or ``unreadable_folder`` issue. Nothing here stops the build.
- Access lists (docs/security.md): ``NAME.access`` beside a file gives that file's principals, one per
  line (``#`` starts a comment); a folder's ``.access`` file gives every file below it that has no
  closer one. Neither is a document. A sidecar that cannot be read or names an invalid principal keeps
  its document out (``invalid_access_file``): a document is never taken in as more public than asked.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import attrs

from heta_framework.contracts.access import check_principals
from heta_framework.contracts.documents import SourceDocument, content_hash, document_id_problem
from heta_framework.errors import InvalidAccessError, InvalidDocumentIdError, KnowledgeBaseError

#: ``report.pdf.access`` holds report.pdf's principals; a folder's ``.access`` those of the files below it
ACCESS_SUFFIX = ".access"
FOLDER_ACCESS_FILE = ".access"


def read_access_file(path: Path) -> tuple[str, ...]:
    """The principals an access file lists, one per line; raises ``InvalidAccessError`` or ``OSError``."""
    lines = path.read_text(encoding="utf-8").splitlines()
    principals = [line.split("#", 1)[0].strip() for line in lines]
    return check_principals([p for p in principals if p], what=str(path))


@attrs.frozen
class SourceItem:
    """One document to ingest. ``modified`` is the file's mtime (``None`` for a ``SourceDocument``)."""

    id: str
    source: str
    name: str
    data: bytes
    metadata: dict[str, Any]
    modified: float | None = None
    #: the access list a sidecar or the ``SourceDocument`` gives (``None``: none given)
    access: tuple[str, ...] | None = None


@attrs.frozen
class SkippedSource:
    """Something the walk did not read, and why (it becomes a build-report issue)."""

    code: str
    path: str
    message: str
    severity: str = "warning"


def raw_suffix(name: str) -> str:
    """The extension a raw copy keeps (``.pdf``), or ``""`` when the name's suffix is not a plain one."""
    suffix = Path(name).suffix.lower()
    return suffix if re.fullmatch(r"\.[a-z0-9]{1,16}", suffix) else ""


def file_document_id(resolved: Path) -> str:
    """A file's document id: a hash of its resolved path (stable across builds of the same folder)."""
    return content_hash(str(resolved))[:16]


def check_given_documents(sources: Iterable[Path | str | SourceDocument]) -> None:
    """Every ``SourceDocument`` id is valid and given once; raise before anything is written."""
    problems: list[str] = []
    seen: dict[str, str] = {}
    for source in sources:
        if not isinstance(source, SourceDocument) or source.id is None:
            continue
        problem = document_id_problem(source.id)
        if problem is not None:
            problems.append(f"{str(source.id)[:80]!r}: {problem}")
            continue
        digest = content_hash(source.content())
        if seen.setdefault(source.id, digest) != digest:
            problems.append(f"{source.id[:80]!r}: given twice with different content in one build")
    if problems:
        listing = "; ".join(problems)
        raise InvalidDocumentIdError(f"Invalid document id(s), nothing was written: {listing}. Give each document a unique, valid id.")


class SourceWalk:
    """Walks the sources once. Iterate for ``SourceItem``s; ``skipped`` fills as the walk goes.

    ``folders`` are the resolved folders walked and ``seen`` every resolved file path met in them
    (read or not), which ``prune`` compares against the catalog.
    """

    def __init__(self, sources: Iterable[Path | str | SourceDocument]):
        self.sources = list(sources)
        self.skipped: list[SkippedSource] = []
        self.folders: list[Path] = []
        self.seen: set[str] = set()
        self._walked_dirs: set[tuple[int, int]] = set()
        self._yielded: set[str] = set()
        self._folder_access: dict[Path, tuple[str, ...] | None] = {}
        self._root = Path(".")
        for source in self.sources:
            if not isinstance(source, SourceDocument) and not os.path.lexists(source):
                raise KnowledgeBaseError(f"No such file or folder: {source}")

    def __iter__(self) -> Iterator[SourceItem]:
        for source in self.sources:
            if isinstance(source, SourceDocument):
                data = source.content()
                yield SourceItem(
                    id=source.id or content_hash(data)[:16],
                    source=source.source or source.name,
                    name=source.name,
                    data=data,
                    metadata=dict(source.metadata),
                    access=source.access,
                )
                continue
            path = Path(source)
            try:
                is_dir = path.is_dir()
            except OSError as exc:
                self._skip_error(path, exc, folder=False)
                continue
            # a folder .access counts up to the folder asked for (a file named directly: its own folder)
            self._root = path if is_dir else path.parent
            if is_dir:
                self.folders.append(path.resolve())
                yield from self._walk(path, ancestors=())
            else:
                yield from self._file(path)

    # --- folders -----------------------------------------------------------------------

    def _walk(self, folder: Path, ancestors: tuple[tuple[int, int], ...]) -> Iterator[SourceItem]:
        try:
            info = folder.stat()
        except OSError as exc:
            self._skip_error(folder, exc, folder=True)
            return
        identity = (info.st_dev, info.st_ino)
        if identity in ancestors:
            self._skip("symlink_loop", folder, f"{folder} links back to a folder being walked ({os.path.realpath(folder)}); not followed.")
            return
        if identity in self._walked_dirs:
            return  # reached again through another link: its files are already in
        self._walked_dirs.add(identity)
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError as exc:
            self._skip_error(folder, exc, folder=True)
            return
        for entry in entries:
            path = Path(entry.path)
            if entry.name == FOLDER_ACCESS_FILE or (entry.name.endswith(ACCESS_SUFFIX) and entry.name != ACCESS_SUFFIX):
                continue  # access lists, read with the files they govern
            if entry.name.startswith("."):
                self._skip("hidden_file_skipped", path, f"{path} starts with '.': hidden files and folders are not read.", severity="info")
                continue
            try:
                is_dir = entry.is_dir()  # follows links
            except OSError as exc:
                self._skip_error(path, exc, folder=False)
                continue
            if is_dir:
                yield from self._walk(path, (*ancestors, identity))
            else:
                yield from self._file(path)

    # --- files -------------------------------------------------------------------------

    def _file(self, path: Path) -> Iterator[SourceItem]:
        try:
            info = path.stat()  # follows links; ELOOP for a link cycle, ENOENT for a broken link
        except OSError as exc:
            self._skip_error(path, exc, folder=False)
            return
        resolved = path.resolve()
        self.seen.add(str(resolved))
        if not stat.S_ISREG(info.st_mode):
            kind = "a FIFO" if stat.S_ISFIFO(info.st_mode) else "a socket" if stat.S_ISSOCK(info.st_mode) else "a device or special file"
            self._skip("not_a_regular_file", path, f"{path} is {kind}, not a regular file; not read.")
            return
        if str(resolved) in self._yielded:
            return  # the same file through two paths (a link): one document
        try:
            with open(resolved, "rb") as handle:
                data = handle.read()
                modified = os.fstat(handle.fileno()).st_mtime
        except OSError as exc:
            self._skip_error(path, exc, folder=False)
            return
        self._yielded.add(str(resolved))
        try:
            access = self._access_for(path)
        except (OSError, UnicodeDecodeError, InvalidAccessError) as exc:
            self._skip("invalid_access_file", path, f"The access list of {path} could not be used ({exc}); the file was not read. "
                       "Fix the .access file (one principal per line) and build again.", severity="error")
            return
        # the target's name, not the link's: one file is one document whichever path reached it
        yield SourceItem(id=file_document_id(resolved), source=str(resolved), name=resolved.name, data=data, metadata={},
                         modified=modified, access=access)

    def _access_for(self, path: Path) -> tuple[str, ...] | None:
        """The file's own sidecar, else the closest folder ``.access`` up to the folder the walk started from."""
        own = path.with_name(path.name + ACCESS_SUFFIX)
        if own.is_file():
            return read_access_file(own)
        for folder in path.parents:
            if folder not in self._folder_access:
                listed = folder / FOLDER_ACCESS_FILE
                self._folder_access[folder] = read_access_file(listed) if listed.is_file() else None
            if self._folder_access[folder] is not None:
                return self._folder_access[folder]
            if folder == self._root:
                break
        return None

    # --- what was skipped ---------------------------------------------------------------

    def _skip(self, code: str, path: Path, message: str, *, severity: str = "warning") -> None:
        self.skipped.append(SkippedSource(code=code, path=str(path), message=message, severity=severity))

    def _skip_error(self, path: Path, exc: OSError, *, folder: bool) -> None:
        if exc.errno == errno.ELOOP:
            self._skip("symlink_loop", path, f"{path} is a symbolic link loop; not followed.")
        elif exc.errno == errno.ENOENT and os.path.islink(path):
            self._skip("broken_symlink", path, f"{path} is a symbolic link to {os.readlink(path)}, which does not exist; not read.")
        else:
            what = "folder" if folder else "file"
            reason = exc.strerror or type(exc).__name__
            self._skip(
                f"unreadable_{what}", path,
                f"{path} could not be read ({reason}); not indexed. Fix its permissions and build again.",
            )
