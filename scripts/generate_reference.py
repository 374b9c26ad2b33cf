"""Write docs/reference.md from the installed plugins (run after adding a step, store, option or mode)."""

from pathlib import Path

from heta_framework.plugins.registry import PluginRegistry
from heta_framework.reference import generate_reference

TARGET = Path(__file__).resolve().parent.parent / "docs" / "reference.md"

if __name__ == "__main__":
    TARGET.write_text(generate_reference(PluginRegistry.from_entry_points(strict=True)), encoding="utf-8")
    print(f"wrote {TARGET}")
