"""A foreign `heta_framework` (the unrelated `heta-framework` project on the index) is named at start-up."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from heta_framework.cli.main import cli
from heta_framework.distribution import check_core_distribution, foreign_owners
from heta_framework.errors import ForeignCoreError
from heta_framework.plugins.registry import PluginRegistry


def install_dist_info(site, name: str, version: str, top_level: str | None) -> None:
    """A real .dist-info as pip leaves it (what importlib.metadata reads)."""
    info = site / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    if top_level is not None:
        (info / "top_level.txt").write_text(top_level + "\n")


@pytest.fixture
def site(tmp_path, monkeypatch):
    folder = tmp_path / "site"
    folder.mkdir()
    monkeypatch.syspath_prepend(str(folder))
    return folder


def test_our_own_install_passes():
    assert foreign_owners() == []
    check_core_distribution()


def test_the_foreign_heta_framework_is_named_with_the_fix(site):
    install_dist_info(site, "heta-framework", "0.1.2", top_level=None)  # hatchling wheels have no top_level.txt
    with pytest.raises(ForeignCoreError) as caught:
        check_core_distribution()
    message = str(caught.value)
    assert "heta-framework 0.1.2" in message
    assert "pip uninstall -y heta-framework && pip install --force-reinstall heta-core" in message
    with pytest.raises(ForeignCoreError):
        PluginRegistry.from_entry_points()


def test_any_other_distribution_shipping_heta_framework_is_found(site):
    install_dist_info(site, "acme-rag", "2.0", top_level="acme\nheta_framework")
    install_dist_info(site, "harmless", "1.0", top_level="harmless")
    assert foreign_owners() == [("acme-rag", "2.0")]


def test_the_cli_stops_with_the_message_and_no_traceback(site):
    install_dist_info(site, "heta-framework", "0.1.2", top_level="heta_framework")
    result = CliRunner().invoke(cli, ["plugins"])
    assert result.exit_code == 2
    assert "heta-framework 0.1.2" in result.output and "Traceback" not in result.output
