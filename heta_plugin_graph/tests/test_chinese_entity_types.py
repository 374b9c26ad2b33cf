"""The nlp extractor on Chinese: part-of-speech tags and their context decide what is an entity and its type."""

from __future__ import annotations

from heta_plugin_graph.extraction.nlp import extract_entities


def entities(text: str) -> dict[str, str]:
    return {e["name"]: e["type"] for e in extract_entities(text)}


def test_verbs_are_not_entities():
    found = entities("长江发源于青藏高原的唐古拉山脉。现存的长城大部分是明朝时期修建的。白茶的制作讲究自然萎凋。")
    assert {"长江", "青藏高原", "唐古拉山脉", "长城"} <= set(found)
    # jieba's dictionary tags 发源 and 现存 as nouns and 讲究, 制作 as verbal nouns: all are actions here
    assert not {"发源", "现存", "讲究", "制作", "制作讲究"} & set(found)


def test_a_single_character_does_not_stick_to_a_name():
    found = entities("方士们在炼制丹药时常用朱砂和硫磺。这条线路很长。")
    assert "丹药" in found and "丹药时" not in found
    assert not {"条线", "条线路", "条"} & set(found)
    assert "线路" in found


def test_an_unknown_word_ending_in_a_common_noun_is_no_person():
    found = entities("白茶是福建特产的一种轻微发酵茶。老白茶存放多年后滋味更加醇厚。张骞出使西域。")
    assert found["白茶"] == "concept" and found["老白茶"] == "concept"
    assert found["福建"] == "location"
    assert found["张骞"] == "person"  # a real name keeps its type


def test_an_english_sentence_citing_a_chinese_name_stays_english(monkeypatch):
    """jieba segments only sentences mostly in Chinese: an English one that cites a name in Chinese keeps its
    English phrases, the Chinese name is one phrase, and jieba's dictionary (118 MB) is never loaded for it."""
    import heta_plugin_graph.extraction.nlp as nlp

    def no_jieba():
        raise AssertionError("jieba was used for an English sentence")

    monkeypatch.setattr(nlp, "_jieba_posseg", no_jieba)
    found = entities("Bai Juyi, courtesy name Letian (樂天), was a Chinese poet of the Tang dynasty.")
    assert found["Bai Juyi"] == "named_entity" and found["Tang"] == "named_entity"
    assert "樂天" in found
    monkeypatch.undo()
    mixed = entities("长城是中国古代的军事防御工程, built by the Ming.")  # Chinese outnumbers Latin letters: jieba's
    assert "长城" in mixed
