"""Text analysis from many threads at once gives every thread its own text's terms.

A server answers concurrent queries on threads, and a build analyses chunks on them too.
Snowball stemmers keep the word they are working on in themselves: one shared stemmer
gave a query another query's stems ("running foxes" came back as ``run swim``) or raised
an IndexError half way through a word.
"""

from __future__ import annotations

import threading

from heta_framework.text.analysis import analyze

TEXTS = ["running foxes", "whales swimming", "pythons coiled", "rivers flowing", "pandas eating", "engines roaring",
         "violins playing", "glaciers melting", "les chevaux couraient", "los caballos corrían"]


def test_every_thread_gets_its_own_texts_terms():
    languages = {text: "french" if text.startswith("les") else "spanish" if text.startswith("los") else "english" for text in TEXTS}
    expected = {text: analyze(text, languages[text]) for text in TEXTS}
    assert expected["running foxes"] == ["run", "fox"]
    wrong: list[tuple[str, object]] = []

    def analyse_many(text: str) -> None:
        try:
            for _ in range(2000):
                terms = analyze(text, languages[text])
                if terms != expected[text]:
                    wrong.append((text, terms))
                    return
        except Exception as exc:  # a stemmer whose word another thread replaced mid-way
            wrong.append((text, exc))

    threads = [threading.Thread(target=analyse_many, args=(text,)) for text in TEXTS]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert wrong == []
