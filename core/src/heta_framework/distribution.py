"""Is the installed ``heta_framework`` package really Heta's core (the ``heta-core`` distribution)?

The package index holds an unrelated project called ``heta-framework`` that installs an
import package of the same name. Installed beside ours (or instead of it), its files
shadow or mix with ours, and the failures that follow (a missing module, a wrong
signature) say nothing about the cause. The CLI and the plugin registry call
:func:`check_core_distribution` at start-up, so the user gets one message that names the
foreign distribution and the fix.
"""

from __future__ import annotations

from importlib import metadata

from heta_framework.errors import ForeignCoreError

CORE_DISTRIBUTION = "heta-core"
IMPORT_PACKAGE = "heta_framework"
#: distributions known to install a different ``heta_framework``; a top_level.txt scan finds others
KNOWN_FOREIGN = ("heta-framework",)


def _normalized(name: str) -> str:
    return name.lower().replace("_", "-").replace(".", "-")


def foreign_owners() -> list[tuple[str, str]]:
    """(name, version) of every installed distribution other than heta-core that provides ``heta_framework``."""
    found: dict[str, str] = {}
    # every distribution's top_level.txt (a small file, or none), and the metadata parsed only where it names our
    # package: parsing all of them (328 in the workspace venv) took a quarter of a second of every `heta` command
    owners = [dist for dist in metadata.distributions() if IMPORT_PACKAGE in (dist.read_text("top_level.txt") or "").split()]
    for known in KNOWN_FOREIGN:  # looked up by name: hatchling's wheels have no top_level.txt
        try:
            owners.append(metadata.distribution(known))
        except metadata.PackageNotFoundError:
            continue
    for dist in owners:
        name = dist.metadata["Name"] or ""
        if _normalized(name) != CORE_DISTRIBUTION:
            found[name] = dist.version
    return sorted(found.items())


def check_core_distribution() -> None:
    """Raise :class:`ForeignCoreError` when another distribution provides ``heta_framework``."""
    foreign = foreign_owners()
    if not foreign:
        return
    names = ", ".join(f"{name} {version}" for name, version in foreign)
    uninstall = " ".join(name for name, _ in foreign)
    raise ForeignCoreError(
        f"The {IMPORT_PACKAGE} package is also installed by {names}, a different project from Heta's core "
        f"({CORE_DISTRIBUTION}); its files shadow or mix with Heta's. Fix it with: "
        f"pip uninstall -y {uninstall} && pip install --force-reinstall {CORE_DISTRIBUTION}"
    )
