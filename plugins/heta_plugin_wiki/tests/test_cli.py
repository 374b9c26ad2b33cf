"""``heta wiki``: a page, the index, JSON, and a clear error for a page that does not exist."""

from __future__ import annotations

import json

from click.testing import CliRunner
from heta_framework.cli.main import cli


def run(path, *args):
    return CliRunner().invoke(cli, ["--kb", str(path), "wiki", *args])


def test_heta_wiki_prints_a_page_and_the_index(built_path):
    page = run(built_path, "ocean")
    assert page.exit_code == 0, page.output
    assert page.output.startswith("# Ocean\n") and "- [Rivers](wiki:rivers)" in page.output
    assert run(built_path, "wiki:ocean").output == page.output
    listing = run(built_path)
    assert listing.exit_code == 0 and listing.output.startswith("# Wiki index") and "(wiki:shanghai)" in listing.output
    data = json.loads(run(built_path, "space", "--json").output)
    assert data["page"] == "space" and data["markdown"].startswith("# Space")


def test_heta_wiki_names_a_missing_page(built_path):
    result = run(built_path, "nope")
    assert result.exit_code == 2 and "no wiki page for document 'nope'" in result.output
