"""Who a bearer token is: the tokens file (``heta serve --tokens FILE``) and the caller a token stands for.

The file holds the SHA-256 of each token, never the token itself, with the principal it acts as,
further principals (groups), the knowledge bases it may use and its rights::

    [[tokens]]
    sha256 = "5e884898da28047151d0e56f8dc6292773603d0d6aabbdd62a11ef721d1542d8"  # printf %s "$TOKEN" | sha256sum
    principal = "alice"
    groups = ["group:hr"]          # optional
    kbs = ["default", "hr"]        # knowledge-base names, or ["*"] for every one
    rights = ["read", "write"]     # "write" implies "read"

A ``.json`` file holds the same as ``{"tokens": [{...}, ...]}``. A presented token is hashed, then
compared with every entry's hash by ``hmac.compare_digest``, all of them every time: how long the
check takes does not tell which entry (if any) matched.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs
from heta_framework.contracts.access import check_principals
from heta_framework.errors import HetaError

READ = "read"
WRITE = "write"
RIGHTS = (READ, WRITE)
#: in ``kbs``: every knowledge base the server serves
ALL_KBS = "*"
_SHA256 = re.compile(r"[0-9a-f]{64}")
_EMPTY_TOKEN_HASH = hashlib.sha256(b"").hexdigest()
_ENTRY_KEYS = frozenset({"sha256", "principal", "groups", "kbs", "rights"})


class TokensFileError(HetaError):
    """The tokens file cannot be used (unreadable, not TOML/JSON, or an entry is invalid); the message names the entry."""


def token_hash(token: str | bytes) -> str:
    """The SHA-256 (hex) the tokens file stores for ``token``: ``printf %s "$TOKEN" | sha256sum``."""
    return hashlib.sha256(token.encode("utf-8") if isinstance(token, str) else token).hexdigest()


@attrs.frozen
class Caller:
    """Who a request runs as: the audit log's ``actor``, the principals its queries carry, where and what it may do."""

    actor: str
    #: the principals queries run with (``kb.query(principals=...)``); empty: public documents only
    principals: tuple[str, ...] = ()
    #: the knowledge-base names it may use; ``None``: every one
    kbs: frozenset[str] | None = None
    rights: frozenset[str] = frozenset(RIGHTS)

    def may_use(self, kb_name: str) -> bool:
        return self.kbs is None or kb_name in self.kbs

    @property
    def may_write(self) -> bool:
        return WRITE in self.rights


#: no token configured (loopback only): every right, every knowledge base, public documents only
ANONYMOUS = Caller(actor="anonymous")
#: the single token of ``--token-file`` / ``HETA_SERVER_TOKEN``: the same, for whoever holds it
SINGLE_TOKEN = Caller(actor="token")


@attrs.frozen
class TokenEntry:
    sha256: bytes = attrs.field(repr=False)
    caller: Caller


class TokenTable:
    """The tokens a server accepts (hashes only) and the caller each one stands for."""

    def __init__(self, entries: Sequence[TokenEntry]):
        if not entries:
            raise TokensFileError("The tokens file lists no tokens; add a [[tokens]] entry (docs/server.md).")
        self._entries = tuple(entries)

    @classmethod
    def single(cls, token: str) -> TokenTable:
        """The ``--token-file`` / ``HETA_SERVER_TOKEN`` mode: one token with every right on every knowledge base."""
        return cls([TokenEntry(token_hash(token).encode("ascii"), SINGLE_TOKEN)])

    @property
    def callers(self) -> tuple[Caller, ...]:
        return tuple(entry.caller for entry in self._entries)

    def authenticate(self, presented: bytes) -> Caller | None:
        """The caller ``presented`` stands for, or ``None``. Every entry is compared, whichever matches."""
        digest = token_hash(presented).encode("ascii")
        found = None
        for entry in self._entries:
            if hmac.compare_digest(digest, entry.sha256):
                found = entry.caller
        return found


def read_tokens(path: str | Path) -> TokenTable:
    """The tokens file at ``path`` (TOML, or JSON when it ends in ``.json``); ``TokensFileError`` says what is wrong."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise TokensFileError(f"Cannot read the tokens file {path}: {exc.strerror}.") from None
    except UnicodeDecodeError:
        raise TokensFileError(f"The tokens file {path} is not UTF-8 text.") from None
    try:
        data = json.loads(text) if path.suffix.lower() == ".json" else tomllib.loads(text)
    except (ValueError, tomllib.TOMLDecodeError) as exc:
        kind = "JSON" if path.suffix.lower() == ".json" else "TOML"
        raise TokensFileError(f"The tokens file {path} is not valid {kind}: {exc}.") from None
    return parse_tokens(data, where=str(path))


def parse_tokens(data: Any, *, where: str = "the tokens file") -> TokenTable:
    if not isinstance(data, Mapping) or set(data) != {"tokens"} or not isinstance(data["tokens"], list):
        raise TokensFileError(f"{where} must hold only a list 'tokens' ([[tokens]] tables in TOML, {{\"tokens\": [...]}} in JSON).")
    entries = [_entry(item, f"{where}: tokens[{index}]") for index, item in enumerate(data["tokens"])]
    seen: dict[bytes, int] = {}
    for index, entry in enumerate(entries):
        if entry.sha256 in seen:
            raise TokensFileError(f"{where}: tokens[{index}] has the same sha256 as tokens[{seen[entry.sha256]}]; each token once.")
        seen[entry.sha256] = index
    return TokenTable(entries)


def _entry(item: Any, where: str) -> TokenEntry:
    if not isinstance(item, Mapping):
        raise TokensFileError(f"{where} must be a table with sha256, principal, kbs and rights.")
    unknown = sorted(set(item) - _ENTRY_KEYS)
    if unknown:
        hint = " (store the token's SHA-256 as sha256, never the token)" if {"token", "secret"} & set(unknown) else ""
        raise TokensFileError(f"{where} has unknown key(s) {', '.join(unknown)}{hint}; the keys are {', '.join(sorted(_ENTRY_KEYS))}.")
    missing = sorted({"sha256", "principal", "kbs", "rights"} - set(item))
    if missing:
        raise TokensFileError(f"{where} misses {', '.join(missing)}.")
    digest = item["sha256"]
    if not isinstance(digest, str) or not _SHA256.fullmatch(digest.lower()):
        raise TokensFileError(f"{where}.sha256 must be 64 hexadecimal digits: the SHA-256 of the token (printf %s \"$TOKEN\" | sha256sum).")
    if digest.lower() == _EMPTY_TOKEN_HASH:
        raise TokensFileError(f"{where}.sha256 is the SHA-256 of an empty token; hash the token itself.")
    principal = item["principal"]
    groups = item.get("groups", [])
    if not isinstance(groups, list):
        raise TokensFileError(f"{where}.groups must be a list of principals, e.g. [\"group:hr\"].")
    try:
        (actor,) = check_principals([principal], what=f"{where}.principal")
        principals = check_principals([actor, *groups], what=f"{where}.groups")
    except ValueError as exc:
        raise TokensFileError(str(exc)) from None
    return TokenEntry(digest.lower().encode("ascii"), Caller(actor, principals, _kbs(item["kbs"], where), _rights(item["rights"], where)))


def _kbs(value: Any, where: str) -> frozenset[str] | None:
    if not isinstance(value, list) or not value or not all(isinstance(name, str) and name for name in value):
        raise TokensFileError(f"{where}.kbs must be a non-empty list of knowledge-base names, or [\"*\"] for every one.")
    return None if ALL_KBS in value else frozenset(value)


def _rights(value: Any, where: str) -> frozenset[str]:
    if not isinstance(value, list) or not value or not all(right in RIGHTS for right in value):
        raise TokensFileError(f"{where}.rights must be a non-empty list of {' and '.join(map(repr, RIGHTS))} (\"write\" implies \"read\").")
    return frozenset(RIGHTS) if WRITE in value else frozenset({READ})


def unknown_kbs(callers: Iterable[Caller], names: Iterable[str]) -> list[str]:
    """Knowledge-base names the callers' entries name that are not served (a typo in the tokens file)."""
    served = set(names)
    return sorted({name for caller in callers for name in (caller.kbs or ()) if name not in served})
