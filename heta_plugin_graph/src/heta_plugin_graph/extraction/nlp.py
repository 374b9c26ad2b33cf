"""The extractor that needs no language model (like GraphRAG's NLP "fast" indexing).

Entities are noun phrases; relations are co-occurrence of two entities in one
sentence of a chunk. English uses POS-free heuristics: runs of words between
stopwords (RAKE-style candidate phrases) and capitalised phrases; Chinese uses
``jieba.posseg`` noun tags, whose dictionary ships inside the jieba wheel. No
model download, no network: the graph modes then work offline and cheaply.
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from collections.abc import Iterable
from functools import lru_cache

import attrs

from heta_plugin_graph.normalize import normalize_name

CO_OCCURS = "co_occurs_with"

_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
#: Latin letters, with the accented ones of Latin-1 and Latin Extended-A/B ("Ōmikami")
_LATIN_LETTER = re.compile(r"[A-Za-z\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u024f]")
_SENTENCE_END = re.compile(r"(?<=[.!?;。！？；])\s*|\n+")
_WORD = re.compile(r"[^\W\d_][\w'’\-]*|\d[\d.,]*|[^\w\s]", re.UNICODE)
_MAX_PHRASE_WORDS = 4
_DESCRIPTION_CHARS = 300

# Function words, pronouns and very common verbs/adverbs: they end a candidate noun phrase.
STOPWORDS = frozenset(
    """
    a about above across after again against all almost along already also although always am among an and another any
    anyone anything are around as at be became because become becomes been before being below between both but by can
    cannot could did do does doing done down during each either else enough especially etc even ever every few first for
    from further get gets given had has have having he her here hers herself him himself his how however i if in include
    includes including into is it its itself just known last later least less like made main mainly make makes many may
    me might more most mostly much must my near nearly neither never new next no nor not now of off often on once one
    only onto or other others otherwise our ours out over own per perhaps rather same see seen several she should since
    so some such than that the their theirs them themselves then there these they this those though through thus to
    together too toward towards under until up upon us use used uses using usually very via was we well were what when
    where whether which while who whom whose why will with within without would yet you your yours called named known
    became include included contains contain containing located based refers referred considered found take taken became
    two three four five six seven eight nine ten hundred thousand million billion century year years
    """.split()
)

# jieba POS tags that name things: n noun, nr person, ns place, nt organisation, nz other proper noun,
# nrt/nrfg transliterated names, eng Latin-script words inside Chinese text. Not vn (verbal nouns:
# 制作, 讲究, 融合 are actions, not things).
_CHINESE_TYPES = {"nr": "person", "nrt": "person", "nrfg": "person", "ns": "location", "nt": "organization", "nz": "named_entity"}
_CHINESE_NOUN_TAGS = frozenset({"n", "nr", "nrt", "nrfg", "ns", "nt", "nz", "eng"})
_PROPER_TAGS = frozenset(_CHINESE_TYPES)


@attrs.frozen
class NlpOptions:
    max_entities_per_chunk: int = 12
    max_relations_per_chunk: int = 10


@attrs.frozen
class Phrase:
    name: str
    type: str


def split_sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END.split(text) if s and s.strip()]


def _is_capitalised(word: str) -> bool:
    return word[:1].isupper()


def english_phrases(sentence: str, lowercase_words: set[str]) -> list[Phrase]:
    """Candidate noun phrases of one English sentence.

    A capitalised run ("Pacific Ocean", "Bank of England") is a named entity;
    any other run of content words between stopwords/punctuation is a concept,
    keeping its last ``_MAX_PHRASE_WORDS`` words (English heads come last).
    """
    phrases: list[Phrase] = []
    run: list[str] = []
    first_word = True

    def flush() -> None:
        if not run:
            return
        words = list(run)
        run.clear()
        while words and words[-1].lower() in ("of", "the", "and"):
            words.pop()
        if not words:
            return
        capitalised = all(_is_capitalised(w) or w.lower() in ("of", "the", "and") for w in words)
        if capitalised:
            phrases.append(Phrase(" ".join(words), "named_entity"))
            return
        words = words[-_MAX_PHRASE_WORDS:]
        if len(words) == 1:
            word = words[0].lower()
            # a lone -ly/-ing/-ed word is an adverb or verb far more often than a noun
            if (len(word) < 3 and not _CJK.search(word)) or word.endswith(("ly", "ing", "ed")):
                return  # two Chinese characters are a whole name (樂天), two letters are not
        phrases.append(Phrase(" ".join(words), "concept"))

    for token in _WORD.findall(sentence):
        lowered = token.lower()
        is_word = token[:1].isalpha()
        if not is_word or lowered in STOPWORDS:
            # "of" may join two capitalised words: "Bank of England"
            if is_word and lowered == "of" and run and all(_is_capitalised(w) for w in run):
                run.append(token)
                first_word = False
                continue
            flush()
            first_word = first_word and not is_word
            continue
        capitalised = _is_capitalised(token)
        if first_word and capitalised and lowered in lowercase_words:
            # a sentence-initial capital that the chunk also writes in lower case is an ordinary word
            token = lowered
            capitalised = False
        if run and capitalised != _is_capitalised(run[-1]) and run[-1].lower() != "of":
            flush()
        run.append(token)
        first_word = False
    flush()
    return [p for p in phrases if any(ch.isalpha() for ch in p.name) and len(p.name) >= 2]


@lru_cache(maxsize=1)
def _jieba_posseg():
    import jieba
    import jieba.posseg

    jieba.setLogLevel(logging.WARNING)
    return jieba.posseg


def _chinese_tag(word: str, tag: str, following: list[tuple[str, str]], known_tags: dict[str, str]) -> str | None:
    """The tag ``word`` is taken with as a noun, or None when, in this sentence, it is no noun at all.

    jieba's tags are a dictionary's, and its dictionary calls some verbs nouns
    (发源, 现存, 流经 are "n"); its HMM guesses "nr" (person) for unknown words
    (白茶). The words around settle it.
    """
    if tag not in _CHINESE_NOUN_TAGS or (tag == "eng" and len(word) < 2):
        return None
    if tag != "eng" and len(word) < 2:
        return None  # one character (时, 条, 中) is a suffix or measure word, never a name on its own
    if tag == "n" and following:
        after = following[0][1]
        if after == "p":  # 发源 于: a noun does not take a preposition's object, a verb does
            return None
        if after == "uj" and len(following) > 1 and following[1][1] in _PROPER_TAGS:
            return None  # 现存 的 长城: an attribute of the name that follows, not a thing of its own
    if tag == "nr" and word not in known_tags and known_tags.get(word[-1], "").startswith("n"):
        return "n"  # an unknown word guessed a person, ending in a common noun (白茶: 茶): a thing
    return tag


def chinese_phrases(sentence: str) -> list[Phrase]:
    """Nouns (and runs of adjacent nouns, "海洋" + "生物") of one sentence with Chinese text."""
    posseg = _jieba_posseg()
    known_tags = posseg.dt.word_tag_tab
    phrases: list[Phrase] = []
    run: list[tuple[str, str]] = []

    def flush() -> None:
        if not run:
            return
        words = [w for w, _ in run]
        tags = [t for _, t in run]
        run.clear()
        typed = next((_CHINESE_TYPES[t] for t in tags if t in _CHINESE_TYPES), "concept")
        joiner = " " if all(t == "eng" for t in tags) else ""
        name = joiner.join(words)
        if len(name) >= 2:
            phrases.append(Phrase(name, "named_entity" if tags == ["eng"] * len(tags) and typed == "concept" else typed))

    pairs = [(pair.word.strip(), pair.flag) for pair in posseg.cut(sentence)]
    pairs = [(word, tag) for word, tag in pairs if word]
    for position, (word, tag) in enumerate(pairs):
        noun_tag = _chinese_tag(word, tag, pairs[position + 1 : position + 3], known_tags)
        if noun_tag is not None:
            # a proper name stands alone: "上海" "市政府" should not fuse into one name with a person
            if run and (noun_tag in _CHINESE_TYPES) != (run[-1][1] in _CHINESE_TYPES):
                flush()
            run.append((word, noun_tag))
            if len(run) >= 3:
                flush()
        else:
            flush()
    flush()
    return phrases


def _mostly_chinese(sentence: str) -> bool:
    """Whether Chinese characters are at least as many as Latin letters: such a sentence is segmented by jieba.

    An English sentence that cites a name in Chinese ("Bai Juyi, courtesy name Letian (樂天), was ...") stays
    on the English path, where the Chinese name is one phrase: jieba would tag every English word ``eng``,
    and loading its dictionary for the 37 such sentences of the 10k bench's English articles cost 118 MB.
    """
    chinese = len(_CJK.findall(sentence))
    return chinese > 0 and chinese >= len(_LATIN_LETTER.findall(sentence))


def sentence_phrases(sentence: str, lowercase_words: set[str]) -> list[Phrase]:
    if _mostly_chinese(sentence):
        return chinese_phrases(sentence)
    return english_phrases(sentence, lowercase_words)


def _lowercase_words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text) if w[:1].islower()}


def _describe(sentence: str) -> str:
    return sentence if len(sentence) <= _DESCRIPTION_CHARS else sentence[: _DESCRIPTION_CHARS - 1] + "…"


def extract_entities(text: str, options: NlpOptions = NlpOptions()) -> list[dict]:
    """The chunk's most salient noun phrases (by count, then first position), as extraction records."""
    lowercase = _lowercase_words(text)
    counts: Counter[str] = Counter()
    first: dict[str, tuple[int, Phrase, str]] = {}
    position = 0
    for sentence in split_sentences(text):
        for phrase in sentence_phrases(sentence, lowercase):
            key = normalize_name(phrase.name)
            if not key or key in STOPWORDS:
                continue
            counts[key] += 1
            if key not in first:
                first[key] = (position, phrase, sentence)
            position += 1
    ranked = sorted(counts, key=lambda k: (-counts[k], first[k][0]))[: options.max_entities_per_chunk]
    return [
        {"name": first[k][1].name, "type": first[k][1].type, "description": _describe(first[k][2]), "attributes": {"mentions": counts[k]}}
        for k in ranked
    ]


def extract_relations(text: str, entities: Iterable[dict], options: NlpOptions = NlpOptions()) -> list[dict]:
    """Entities that co-occur in one sentence, most often first, at most ``max_relations_per_chunk``."""
    names = {normalize_name(e["name"]): e["name"] for e in entities}
    if len(names) < 2:
        return []
    lowercase = _lowercase_words(text)
    together: Counter[tuple[str, str]] = Counter()
    where: dict[tuple[str, str], str] = {}
    for sentence in split_sentences(text):
        present = sorted({k for p in sentence_phrases(sentence, lowercase) if (k := normalize_name(p.name)) in names})
        for i, a in enumerate(present):
            for b in present[i + 1 :]:
                together[(a, b)] += 1
                where.setdefault((a, b), sentence)
    ranked = sorted(together, key=lambda pair: (-together[pair], pair))[: options.max_relations_per_chunk]
    return [
        {"source": names[a], "target": names[b], "type": CO_OCCURS, "name": "co-occurs with", "description": _describe(where[(a, b)])}
        for a, b in ranked
    ]
