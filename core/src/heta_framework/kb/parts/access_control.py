"""Who may read which documents: a caller's ``AccessScope`` from the catalog's access lists and the recipe's
policy, and changing a document's access list (the catalog alone: nothing is parsed or embedded again)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import attrs

from heta_framework.contracts.access import AccessPolicy, AccessScope, check_principals, visible_documents
from heta_framework.contracts.documents import DocumentRecord
from heta_framework.kb.parts.loaded_state import LoadedState


class AccessControl:
    def __init__(self, loaded: LoadedState, policy: AccessPolicy):
        self._loaded = loaded
        self.policy = policy
        # principals -> scope, valid while the catalog is the one they were computed from
        self._scopes: dict[frozenset[str], AccessScope] = {}
        self._catalog_token: object = None

    def scope(self, principals: Iterable[str] | None) -> AccessScope:
        """What a caller with ``principals`` may read (no principals: the public documents only)."""
        wanted = frozenset(check_principals(principals))
        token = (id(self._loaded.catalog), self._loaded.catalog_version)
        if token != self._catalog_token:
            self._scopes = {}
            self._catalog_token = token
        scope = self._scopes.get(wanted)
        if scope is None:
            readers = {doc_id: self.policy.readers(record.access) for doc_id, record in self._loaded.catalog.items()}
            scope = self._scopes[wanted] = AccessScope(principals=wanted, visible=visible_documents(readers, wanted))
        return scope

    def readers(self, record: DocumentRecord) -> tuple[str, ...]:
        return self.policy.readers(record.access)

    def set_access(self, document_ids: Sequence[str], access: Iterable[str] | None) -> list[DocumentRecord]:
        """Give ``document_ids`` the access list ``access`` (``None``: the recipe's default); the caller holds
        the writer lock. Unknown ids are refused before anything changes."""
        from heta_framework.errors import KnowledgeBaseError

        readers = None if access is None else check_principals(access, what="the access list")
        catalog = self._loaded.catalog
        unknown = [d for d in document_ids if d not in catalog]
        if unknown:
            raise KnowledgeBaseError(
                f"No document with id {unknown[0]!r} in the knowledge base; nothing was changed. `heta documents` lists the ids."
            )
        changed = []
        for doc_id in dict.fromkeys(document_ids):
            if catalog[doc_id].access != readers:
                catalog[doc_id] = attrs.evolve(catalog[doc_id], access=readers)
                changed.append(catalog[doc_id])
        if changed:
            self._loaded.save_catalog()
        return changed
