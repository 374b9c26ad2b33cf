"""Exceptions for problems Heta cannot recover from.

Every message says what went wrong *and what to do about it*. Recoverable
problems never raise: they become ``StepIssue`` records (builds) or
``metadata["issues"]`` entries (queries).
"""

from __future__ import annotations

from collections.abc import Iterable


class HetaError(Exception):
    """Base class of every error Heta raises on purpose."""


class RecipeError(HetaError):
    """A recipe file or object is malformed."""


class RecipeValidationError(RecipeError):
    """A recipe's steps need things nothing provides. Lists *all* problems at once."""

    def __init__(self, problems: Iterable[str]):
        self.problems = tuple(problems)
        lines = "\n".join(f"  - {p}" for p in self.problems)
        super().__init__(
            f"The recipe cannot run: {len(self.problems)} problem(s) found before any step ran:\n{lines}"
        )


class ForeignCoreError(HetaError):
    """Another distribution (not heta-core) installed a ``heta_framework`` package."""


class PluginError(HetaError):
    """A plugin could not be loaded or registered something invalid."""


class DuplicateRegistrationError(PluginError):
    """Two plugins registered the same name."""


class UnknownNameError(HetaError, LookupError):
    """A step, query mode, store type, parser or model provider is not registered."""


class ModeUnavailableError(HetaError):
    """A query mode exists but the knowledge base lacks an asset or component it needs."""


class QueryRecursionError(HetaError):
    """A query engine called a mode that is already on the call stack."""


class InvalidQueryError(HetaError, ValueError):
    """A query's text, ``top_k``, filters or options are invalid (an unknown option, a value out of range).

    The message is for the person who wrote the query: it names the field and what it accepts.
    """


class StepFailedError(HetaError):
    """A build step raised; the knowledge base stays readable and the build resumable."""


class KnowledgeBaseError(HetaError):
    """The knowledge-base folder is missing, incomplete or from an incompatible version."""


class KnowledgeBaseLockedError(KnowledgeBaseError):
    """Another writer (a build, remove or delete, maybe in another process) holds the knowledge base.

    ``holder`` is what the lock file says about it (pid, host, started, operation), or ``{}``.
    """

    code = "knowledge_base_locked"

    def __init__(self, message: str, holder: dict | None = None):
        super().__init__(message)
        self.holder = dict(holder or {})


class KnowledgeBaseBusyError(KnowledgeBaseError):
    """A query met the stores while another process was writing them. Retryable: ask again."""

    code = "knowledge_base_busy"
    retryable = True


class InvalidDocumentIdError(KnowledgeBaseError, ValueError):
    """A document id cannot be used (empty, NUL or other control characters, ``.``/``..`` segments, too long)."""

    code = "invalid_document_id"


class InvalidAccessError(HetaError, ValueError):
    """An access list or a caller's principals are invalid (not a list, empty or control characters, too long)."""

    code = "invalid_access"


class StoreConnectionError(HetaError):
    """A server-backed store (PostgreSQL, Milvus, ...) cannot be reached or lost its connection.

    The message names the server (host, port, database) but never a password, and says what to do.
    """

    code = "store_unavailable"


class ExecutorError(HetaError):
    """The recipe's executor cannot run the build's work (a cluster that cannot be reached, a lost driver
    connection). The message names the address and says what to do; the build can be run again."""

    code = "executor_unavailable"


class ModelError(HetaError):
    """A model provider could not be created or a model call failed for good."""


class ModelTimeoutError(ModelError):
    """A model call did not answer in time, after every retry."""


class EvaluationError(HetaError):
    """An evaluation cannot run as asked (``heta eval``, ``heta_framework.evaluation``)."""


class EvaluationDataError(EvaluationError, ValueError):
    """An evaluation set's files are missing or malformed; the message names the file and line."""


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """A short hint that lists the registered names closest to ``name``."""
    import difflib

    known = sorted(known)
    close = difflib.get_close_matches(name, known, n=3)
    hint = f" Did you mean {', '.join(repr(c) for c in close)}?" if close else ""
    listing = ", ".join(known) if known else "(none)"
    return f"Registered: {listing}.{hint}"
