"""Who may read what: documents' access lists, the recipe's access policy, and a query's access scope.

A document's access list names the principals that may read it (a user, ``group:hr``, anything a
deployment maps its callers to). ``public`` in the list means everyone, callers without principals
included. A document without a list of its own takes the recipe's ``[access] default`` (``["public"]``
unless the recipe says otherwise), so a knowledge base built before access lists existed stays public.

A query carries an ``AccessScope``: the caller's principals and the documents they may read. The
knowledge base turns the scope into a ``document_id`` filter pushed into every store, so top-k is the
caller's top-k; derived results (graph facts, reports) show only what visible documents support
(``docs/security.md``).
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable, Hashable, Iterable, Mapping
from typing import Any

import attrs

#: the principal that stands for everyone, including callers without any principal
PUBLIC = "public"
MAX_PRINCIPAL_LENGTH = 256
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def principal_problem(principal: object) -> str | None:
    """Why ``principal`` cannot name a principal, or ``None`` when it can."""
    if not isinstance(principal, str):
        return f"a principal must be text, got {type(principal).__name__}"
    if not principal.strip() or principal != principal.strip():
        return "a principal must not be empty or start or end with spaces"
    if len(principal) > MAX_PRINCIPAL_LENGTH:
        return f"a principal must be at most {MAX_PRINCIPAL_LENGTH} characters"
    if _CONTROL.search(principal):
        return "a principal must not contain control characters"
    try:
        principal.encode("utf-8")
    except UnicodeEncodeError:
        return "a principal must be valid Unicode text"
    return None


def check_principals(principals: Iterable[str] | str | None, *, what: str = "principals") -> tuple[str, ...]:
    """``principals`` as a sorted tuple without repeats; ``InvalidAccessError`` names a bad one."""
    from heta_framework.errors import InvalidAccessError

    if principals is None:
        return ()
    if isinstance(principals, str):
        raise InvalidAccessError(f"{what} must be a list of principals, got the text {principals!r}; write [{principals!r}].")
    checked = []
    for principal in principals:
        problem = principal_problem(principal)
        if problem is not None:
            raise InvalidAccessError(f"Invalid principal {str(principal)[:80]!r} in {what}: {problem}.")
        checked.append(principal)
    return tuple(sorted(set(checked)))


def access_list(value: Iterable[str] | None) -> tuple[str, ...] | None:
    """A document's access list as stored (``None``: the recipe's default applies)."""
    return None if value is None else check_principals(value, what="the access list")


@attrs.frozen
class AccessRule:
    """``[[access.rules]] glob = "hr/**"``: documents whose source matches get ``principals``."""

    glob: str
    principals: tuple[str, ...] = attrs.field(converter=check_principals)

    def matches(self, source: str) -> bool:
        path = source.replace("\\", "/")
        # a relative pattern matches at any depth, as in .gitignore: "hr/**" matches /data/hr/pay.txt
        pattern = self.glob if self.glob.startswith("/") else f"*/{self.glob}"
        return fnmatch.fnmatchcase(path, pattern) or fnmatch.fnmatchcase(path, self.glob)


def _rules(value: Iterable[Any]) -> tuple[AccessRule, ...]:
    return tuple(rule if isinstance(rule, AccessRule) else AccessRule(**rule) for rule in value)


@attrs.frozen
class AccessPolicy:
    """The recipe's ``[access]`` table: who reads documents without a list of their own, and rules by path."""

    default: tuple[str, ...] = attrs.field(default=(PUBLIC,), converter=check_principals)
    rules: tuple[AccessRule, ...] = attrs.field(default=(), converter=_rules)

    def for_source(self, source: str) -> tuple[str, ...] | None:
        """The access list the first matching rule gives a document read from ``source`` (``None``: no rule)."""
        return next((rule.principals for rule in self.rules if rule.matches(source)), None)

    def readers(self, document_access: tuple[str, ...] | None) -> tuple[str, ...]:
        """Who may read a document with ``document_access`` (its own list, or the default)."""
        return self.default if document_access is None else document_access

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"default": list(self.default)}
        if self.rules:
            data["rules"] = [{"glob": rule.glob, "principals": list(rule.principals)} for rule in self.rules]
        return data


def may_read(readers: Iterable[str], principals: frozenset[str]) -> bool:
    return any(reader == PUBLIC or reader in principals for reader in readers)


@attrs.frozen
class AccessScope:
    """What a query may see: the caller's ``principals`` and the ids of the documents they may read.

    ``visible=None`` means every document (nothing to filter). A composed mode's nested queries
    inherit the scope of the query that called them; an engine cannot widen it.
    """

    principals: frozenset[str] = attrs.field(default=frozenset(), converter=frozenset)
    visible: frozenset[str] | None = None
    #: what engines derived from this scope (``remember``): valid as long as the scope, which the knowledge
    #: base makes anew whenever its catalog changes (a build, a removal, an access change, another process's commit)
    _memo: dict[Any, Any] = attrs.field(factory=dict, eq=False, repr=False, alias="_memo")

    def remember(self, key: Hashable, compute: Callable[[], Any]) -> Any:
        """``compute()``, once per scope and ``key`` (e.g. the graph facts its documents support): a caller's
        queries then share it instead of paying for it each time."""
        try:
            return self._memo[key]
        except KeyError:
            value = self._memo[key] = compute()
            return value

    @property
    def restricted(self) -> bool:
        return self.visible is not None

    @property
    def visible_filter(self) -> VisibleDocuments | None:
        """The visible documents as a filter value, one object per scope (``None``: every document), so a cache
        keyed by what a filter selects finds it again cheaply."""
        if self.visible is None:
            return None
        return self.remember("visible_documents", lambda: VisibleDocuments(self.visible))

    def allows(self, document_id: str | None) -> bool:
        return self.visible is None or document_id in self.visible

    def allows_all(self, document_ids: Iterable[str]) -> bool:
        return self.visible is None or all(d in self.visible for d in document_ids)

    def restrict(self, filters: Mapping[str, Any]) -> dict[str, Any]:
        """``filters`` with ``document_id`` narrowed to the visible documents (a store's any-of list)."""
        if self.visible is None:
            return dict(filters)
        wanted = filters.get("document_id")
        if wanted is None or wanted is self.visible_filter:
            return {**filters, "document_id": self.visible_filter}
        asked = wanted if isinstance(wanted, (list, tuple, set, frozenset)) else [wanted]
        return {**filters, "document_id": VisibleDocuments(d for d in asked if d in self.visible)}


class VisibleDocuments(frozenset):
    """The document ids a scope allows, as a filter value: already checked ids (each came from the
    catalog), so ``QueryRequest`` does not check thousands of them again for every nested query."""


def visible_documents(readers_by_document: Mapping[str, tuple[str, ...]], principals: frozenset[str]) -> frozenset[str] | None:
    """The documents ``principals`` may read, or ``None`` when that is every document."""
    visible = frozenset(doc_id for doc_id, readers in readers_by_document.items() if may_read(readers, principals))
    return None if len(visible) == len(readers_by_document) else visible
