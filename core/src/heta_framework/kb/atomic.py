"""The public import path of ``heta_framework.common.atomic`` (where the code lives, in its layer: docs/architecture.md)."""

from heta_framework.common.atomic import read_json, replacing, write_bytes_atomic, write_json_atomic

__all__ = ["read_json", "replacing", "write_bytes_atomic", "write_json_atomic"]
