"""Write docs/reference.md from the installed plugins and docs/value-types.md from the code (run after adding a
step, store, option, mode or a field of a value type)."""

from pathlib import Path

from heta_framework.plugins.registry import PluginRegistry
from heta_framework.reference import generate_reference
from heta_framework.reference.value_types import generate_value_types

DOCS = Path(__file__).resolve().parent.parent / "docs"

if __name__ == "__main__":
    for name, text in (("reference.md", generate_reference(PluginRegistry.from_entry_points(strict=True))),
                       ("value-types.md", generate_value_types())):
        (DOCS / name).write_text(text, encoding="utf-8")
        print(f"wrote {DOCS / name}")
