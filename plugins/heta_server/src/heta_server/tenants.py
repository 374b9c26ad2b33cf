"""The knowledge bases one server serves (its tenants) and one request's view of them: who asks, about which one.

A caller's knowledge bases are the ones its token names; any other one does not exist for it: asking for
it answers exactly what an unknown name answers (404 ``UnknownKnowledgeBase``), so a token cannot find out
which other knowledge bases a server holds. Inside a knowledge base a document the caller may not read is
answered like an unknown one (404 ``UnknownDocument``).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable, Mapping
from typing import Any

import attrs
from fastapi import Request
from heta_framework.contracts.access import AccessScope
from heta_framework.contracts.documents import DocumentRecord
from heta_framework.kb import KnowledgeBase

from heta_server.errors import ApiError
from heta_server.jobs import JobRecords, JobRunner
from heta_server.tokens import Caller
from heta_server.warm import warm_up

log = logging.getLogger(__name__)

#: where the ``Guard`` leaves the caller a request's token stands for (an ASGI scope key of this server's own)
CALLER_KEY = "heta.caller"


@attrs.define
class Tenant:
    name: str
    kb: KnowledgeBase
    jobs: JobRunner
    #: its local models are loaded (at start-up, or by its first query under --no-warm)
    warmed: bool = False
    _warming: asyncio.Lock = attrs.field(factory=asyncio.Lock, repr=False)

    async def ready(self) -> float | None:
        """Load the local models if no query has yet: the seconds that took (the first query's wait, shown as
        such in its log line rather than as a slow search), else ``None``."""
        if self.warmed:
            return None
        async with self._warming:
            if self.warmed:
                return None
            log.info("loading the models of knowledge base %r for its first query", self.name)
            seconds = await warm_up(self.kb)
            self.warmed = True
            return seconds


class Tenants:
    def __init__(self, knowledge_bases: Mapping[str, KnowledgeBase]):
        self._by_name = {
            name: Tenant(name, kb, JobRunner(kb.secrets(), JobRecords(kb))) for name, kb in knowledge_bases.items()
        }

    def __iter__(self) -> Any:
        return iter(self._by_name.values())

    @property
    def names(self) -> list[str]:
        return list(self._by_name)

    def secrets(self) -> list:
        return [secret for tenant in self for secret in tenant.kb.secrets()]

    def get(self, name: str, caller: Caller) -> Tenant:
        tenant = self._by_name.get(name)
        if tenant is None or not caller.may_use(name):
            # the same answer for a name that is not served and one this caller may not use
            raise ApiError(404, "UnknownKnowledgeBase", f"No knowledge base {name[:80]!r} here; GET /api/v1/kbs lists yours.")
        return tenant

    def usable(self, caller: Caller) -> list[str]:
        return [name for name in self._by_name if caller.may_use(name)]


def caller_of(request: Request) -> Caller:
    caller = request.scope.get(CALLER_KEY)
    if not isinstance(caller, Caller):  # only an app without its Guard gets here: refuse rather than guess
        raise ApiError(401, "Unauthorized", "This request carries no caller.")
    return caller


@attrs.frozen
class Call:
    """One request: the caller and the knowledge base it asked for."""

    caller: Caller
    tenant: Tenant

    @property
    def kb(self) -> KnowledgeBase:
        return self.tenant.kb

    @property
    def actor(self) -> str:
        return self.caller.actor

    def scope(self) -> AccessScope:
        """What the caller may read now (the catalog is read again when another process changed it)."""
        return self.kb.access_scope(self.caller.principals)

    def readable(self) -> list[DocumentRecord]:
        scope = self.scope()
        return [record for doc_id, record in self.kb.documents.items() if scope.allows(doc_id)]

    def document(self, document_id: str) -> DocumentRecord:
        """The document, or 404 ``UnknownDocument`` when there is none or the caller may not read it (the same answer)."""
        scope = self.scope()
        record = self._known(document_id)
        if record is None or not scope.allows(document_id):
            raise unknown_document(document_id)
        return record

    def check_writable(self, document_ids: Iterable[str]) -> None:
        """New ids, or documents the caller may read; writing over a document it may not read is refused (403)."""
        scope = self.scope()
        hidden = [doc_id for doc_id in document_ids if self._known(doc_id) is not None and not scope.allows(doc_id)]
        if hidden:
            raise ApiError(403, "Forbidden", f"You may not write the document {hidden[0][:200]!r}; use another id.")

    def _known(self, document_id: str) -> DocumentRecord | None:
        try:
            return self.kb.document(document_id)
        except KeyError:
            return None


def unknown_document(document_id: str) -> ApiError:
    return ApiError(404, "UnknownDocument", f"No document {document_id!r}; GET /api/v1/documents lists them.")

