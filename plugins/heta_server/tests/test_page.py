"""The search page in a real headless Chromium (Debian's ``chromium``; ``.ci/run`` installs it).

Chromium loads the page from a real uvicorn, runs its JavaScript (``--virtual-time-budget``
lets the fetches finish) and prints the resulting DOM (``--dump-dom``), which the tests read.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from html import unescape
from urllib.parse import urlencode

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="the chromium binary is not installed (apt-get install chromium; .ci/run does it)"
)


def rendered(url: str, *, screenshot: str | None = None) -> str:
    """The page's DOM after its scripts ran, as Chromium serialises it."""
    args = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--virtual-time-budget=8000"]
    if screenshot:
        subprocess.run([*args, "--window-size=1000,1000", f"--screenshot={screenshot}", url], capture_output=True, timeout=120, check=True)
    done = subprocess.run([*args, "--dump-dom", url], capture_output=True, text=True, timeout=120, check=True)
    return done.stdout


def status_text(dom: str) -> str:
    match = re.search(r'<div id="status"[^>]*>(.*?)</div>', dom, re.S)
    return unescape(match.group(1)) if match else ""


def test_the_mode_list_is_the_api_modes(served):
    with served.client() as client:
        rows = client.get("/api/v1/modes").json()["modes"]
    dom = rendered(served.url + "/")
    options = re.findall(r'<option value="([^"]+)" data-available="(yes|no)"', dom)
    assert options == [(row["mode"], "yes" if row["available"] else "no") for row in rows]


def test_a_query_shows_results_with_source_score_and_highlights(served, tmp_path):
    shot = tmp_path / "page.png"
    dom = rendered(served.url + "/?" + urlencode({"q": "Who discovered penicillin", "mode": "full_text_search"}), screenshot=str(shot))
    assert re.match(r"\d+ results? from full_text_search in \d+ ms", status_text(dom)), status_text(dom)
    results = re.findall(r'<div class="result"><div class="meta">([^<]*)</div>', dom)
    assert results and results[0].startswith("penicillin.md · score ")
    assert "<mark>penicillin</mark>" in dom.lower()
    assert shot.stat().st_size > 5_000  # a real rendering, not a blank file


def test_memory_search_shows_the_three_scores_and_related(served):
    dom = rendered(served.url + "/?" + urlencode({"q": "Who discovered penicillin", "mode": "memory_search"}))
    assert "from memory_search" in status_text(dom)
    assert re.search(r"recency \d\.\d\d · importance 0\.90 · relevance 1\.00", dom)
    assert '<div id="related-block">' in dom  # shown (not hidden) for memory_search


def test_an_unavailable_mode_says_why(served):
    dom = rendered(served.url + "/?" + urlencode({"q": "penicillin", "mode": "sql_text_search"}))
    message = status_text(dom)
    assert message.startswith("Mode sql_text_search is unavailable: ") and "chunk_text_index" in message
    assert 'class="error"' in dom
    assert '<div class="result">' not in dom


def test_a_token_server_opens_in_the_browser_and_searches_with_the_token(built_kb, server_factory):
    from heta_server.config import ServerConfig

    token = "page-t0ken-0123456789abcdef"
    running = server_factory(built_kb, ServerConfig(token=token))
    query = "/?" + urlencode({"q": "Who discovered penicillin", "mode": "full_text_search"})
    locked = rendered(running.url + query)  # no token yet: the page loads and asks for it
    assert '<div id="auth" class="shown">' in locked and "Unauthorized" in status_text(locked)
    assert '<div class="result">' not in locked
    # the token in the link's fragment (never sent to the server) goes to the tab's session storage
    dom = rendered(running.url + query + "#token=" + token)
    assert re.match(r"\d+ results? from full_text_search in \d+ ms", status_text(dom)), status_text(dom)
    assert re.findall(r'<div class="result"><div class="meta">([^<]*)</div>', dom)[0].startswith("penicillin.md")
    assert 'class="shown"' not in dom
