"""Whoosh and tantivy pass core's text-index conformance suite, with the English and Chinese analyzers."""

from __future__ import annotations

import pytest

from heta_framework.testing.conformance import TextIndexStoreSuite
from heta_plugin_fulltext import TantivyStoreConfig, WhooshStoreConfig, WhooshTextIndex


def _tantivy(config):
    from heta_plugin_fulltext.tantivy_store import TantivyTextIndex

    return lambda root: TantivyTextIndex.open(config, root)


class TestWhooshEnglish(TextIndexStoreSuite):
    @pytest.fixture
    def store_factory(self):
        return lambda root: WhooshTextIndex.open(WhooshStoreConfig(analyzer="english"), root)


class TestWhooshChinese(TextIndexStoreSuite):
    segments_cjk = True

    @pytest.fixture
    def store_factory(self):
        return lambda root: WhooshTextIndex.open(WhooshStoreConfig(analyzer="chinese"), root)


class TestTantivyEnglish(TextIndexStoreSuite):
    @pytest.fixture
    def store_factory(self):
        return _tantivy(TantivyStoreConfig(analyzer="english"))


class TestTantivyChinese(TextIndexStoreSuite):
    segments_cjk = True

    @pytest.fixture
    def store_factory(self):
        return _tantivy(TantivyStoreConfig(analyzer="chinese"))
