"""The public import path of ``heta_framework.contracts.access`` (where the code lives, in its layer: docs/architecture.md)."""

from heta_framework.contracts.access import PUBLIC, AccessPolicy, AccessRule, AccessScope, check_principals

__all__ = ["PUBLIC", "AccessPolicy", "AccessRule", "AccessScope", "check_principals"]
