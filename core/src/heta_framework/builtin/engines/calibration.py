"""Fusion weights that fit the knowledge base, calibrated on pseudo-queries it makes from its own chunks.

Equal RRF weights let a weak leg drag a strong one down: with an English-only
embedding model over French text, ``heta_rerank_search`` fell well below
``full_text_search`` alone. So, unless the caller gives ``hybrid_weights``, a
composed mode weighs its two legs by how well each finds this knowledge base's
own text:

1. Up to ``PSEUDO_QUERIES`` chunks are drawn (a fixed seed, so the same state
   gives the same set) and each becomes a query: a few of its longer words in a
   shuffled order, or a span of characters for Chinese/Japanese text. The
   chunk's document is the known answer; no labels are needed.
2. Each leg answers every pseudo-query once.
3. Every weight ratio in ``RATIOS`` is tried on those answers. Of the ratios whose
   fused MRR@10 is within ``TOLERANCE`` of the best, the one closest to equal
   weights wins: 40 pseudo-queries cannot tell apart differences smaller than
   that, and equal weights are the spec's. The ratios run from leaving the first
   list out (0) to leaving the second out (infinity), so the fusion can always
   do as well as its better list on the pseudo-queries.
4. Pseudo-queries are made of the knowledge base's own words, so they overrate a
   lexical leg against a dense one (full-text search finds almost every one of
   them). How much depends on how lexical the leg is:

   - a words-only leg (full-text or SQL text search) against one that ranks by the
     embedding model: the words-only leg may lose half its weight, never gain any
     (``BOUNDED_RATIOS``): a tilt toward it is what the bias predicts anyway, a tilt
     away from it is evidence despite the bias. For the same reason a tie goes the
     other way than in point 3: if equal weights do no better than halving the
     words-only leg on queries that flatter it, it is worth less than its score on
     real questions, so the half weight wins unless equal weights beat it by more
     than ``BIAS_MARGIN`` (twice the noise: the bias alone predicts that equal
     weights do better on pseudo-queries).
   - two legs that both rank by the embedding model, one also by words
     (``heta_graph_search`` weighs fact vectors by their evidence's words, against
     ``vector_search``): the bias is milder, so either leg may gain or lose half
     its weight (``MILD_RATIOS``). As in the bounded pair, a tie goes to the
     partly lexical leg's half weight, and equal or doubled weight for it needs a
     win of more than ``BIAS_MARGIN`` on the pseudo-queries. Held-out English
     questions showed the bounded range wrong here: it could not double the graph
     leg, the better one (0.804 MRR@10 against 0.843 for graph search alone on
     2,000 articles; the 10k tier, 0.656 against 0.671); doubled, it wins by far
     more than the margin on English pseudo-queries. French ones (multilingual-e5-small)
     showed equal weights too generous: pseudo-queries put them 0.003 ahead of the
     graph leg's half weight, and on 600 real questions they lost to it (0.822
     against 0.828 MRR@10, vector search alone 0.832).

   Both hold unless there is independent evidence that the dense leg is weak here:
   its embedding model declares the languages it knows (``client.languages``, ISO
   639-1 codes) and the language most of the sampled chunks are written in is not
   one of them (an English-only model over French text). Then the whole range is
   open and the lexical leg may take over. Two legs that rank by the same signals
   always have the whole range.

The result depends only on the committed build, so it is computed once per
build state and kept in the knowledge-base folder (``fusion_calibration.json``,
write then rename); a later build makes a new one. Queries of the calibration
run untraced, so the caller's trace shows only its own query.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import math
import os
import random
import weakref
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import attrs

from heta_framework.builtin.engines.composed_options import DEFAULT_FUSION_WEIGHTS, DEFAULT_HYBRID_WEIGHTS, DEFAULT_RERANK_WEIGHTS
from heta_framework.builtin.engines.fusion import DEFAULT_RRF_K, RankedList, reciprocal_rank_fusion
from heta_framework.builtin.engines.mode_assets import (
    CHUNK_FULL_TEXT_INDEX,
    CHUNK_TEXT_INDEX,
    CHUNK_VECTOR_INDEX,
    GRAPH_TABLES,
    GRAPH_VECTOR_INDEX,
    MODE_ASSETS,
)
from heta_framework.contracts.documents import chunk_from_dict
from heta_framework.contracts.search import QueryContext, QueryRequest, QueryResult
from heta_framework.distribution import CORE_DISTRIBUTION
from heta_framework.text.analysis import words
from heta_framework.text.languages import CJK_LANGUAGES, STEMMED_LANGUAGES, detect_language, has_cjk

log = logging.getLogger(__name__)

PSEUDO_QUERIES = 40
#: weight of the second leg relative to the first; 1.0 is the spec's equal weighting, 0 and inf leave one out
RATIOS = (0.0, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 10.0, math.inf)
#: the ratios open to a pair where one leg ranks by words more than the other and the model is not known to be
#: weak here: the more lexical leg may lose half its weight, never gain (``ratio_range``)
TOWARD_DENSER = 0.5
BOUNDED_RATIOS = (TOWARD_DENSER, 1.0)
#: the ratios open to two dense legs of which one also ranks by words: half or double either way, ties equal
MILD_RATIOS = (0.5, 1.0, 2.0)
#: fused MRR differences smaller than this are noise on PSEUDO_QUERIES queries
TOLERANCE = 0.01
#: what a ratio weighing the more lexical leg more must win by: the pseudo-queries' bias alone predicts such a
#: gain, so it counts as evidence only well above the noise (module docstring, point 4)
BIAS_MARGIN = 2 * TOLERANCE
CANDIDATES = 30
CUTOFF = 10
#: fewer documents than this and a calibration would be noise: the default weights stay
MIN_DOCUMENTS = 8
CACHE_FILE = "fusion_calibration.json"
#: bumped when the way weights are chosen changes, so a stored calibration of the old rule is made again
RULE_VERSION = 8
_QUERY_WORDS = 6
_QUERY_CJK_CHARACTERS = 10
_CONCURRENCY = 4


#: (pseudo-query text, leg, the leg's options as JSON) -> that leg's results, within one build state
LegAnswers = dict[tuple[str, str, str], Sequence[QueryResult]]


@attrs.frozen
class PseudoQuery:
    text: str
    document_id: str
    #: the language its chunk is written in (an analyzer name, ``detect_language``); "" when not known
    language: str = ""


@attrs.frozen
class Calibration:
    """The chosen weights and what they were chosen on (shown in ``metadata["fusion"]["calibration"]``)."""

    weights: Mapping[str, float]
    pseudo_queries: int
    leg_mrr: Mapping[str, float]
    fused_mrr: float
    equal_weights_mrr: float
    #: why the weights could move as far as they did ("bounded: ..." or "full range: ...")
    weight_range: str = "full range"

    def to_dict(self) -> dict[str, Any]:
        return {
            "weights": dict(self.weights),
            "pseudo_queries": self.pseudo_queries,
            "leg_mrr": {k: round(v, 4) for k, v in self.leg_mrr.items()},
            "fused_mrr": round(self.fused_mrr, 4),
            "equal_weights_mrr": round(self.equal_weights_mrr, 4),
            "weight_range": self.weight_range,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Calibration:
        return cls(
            weights={k: float(v) for k, v in data["weights"].items()},
            pseudo_queries=int(data["pseudo_queries"]),
            leg_mrr=dict(data["leg_mrr"]),
            fused_mrr=float(data["fused_mrr"]),
            equal_weights_mrr=float(data["equal_weights_mrr"]),
            weight_range=str(data.get("weight_range", "full range")),
        )


# --- pseudo-queries --------------------------------------------------------------


def pseudo_query_text(text: str, rng: random.Random) -> str | None:
    """A query a reader of ``text`` might type: some of its longer words, shuffled; a character span for CJK."""
    tokens = list(words(text))
    cjk = [t for t in tokens if has_cjk(t)]
    if cjk and sum(map(len, cjk)) > sum(len(t) for t in tokens if not has_cjk(t)):
        run = max(cjk, key=len)
        if len(run) <= _QUERY_CJK_CHARACTERS:
            return run
        start = rng.randrange(len(run) - _QUERY_CJK_CHARACTERS)
        return run[start : start + _QUERY_CJK_CHARACTERS]
    # four letters or more skips most function words in any language without a stop list
    candidates = list(dict.fromkeys(t for t in tokens if len(t) >= 4 and not t.isdigit()))
    if len(candidates) < 3:
        return None
    return " ".join(rng.sample(candidates, min(_QUERY_WORDS, len(candidates))))


def pseudo_queries(kb: Any, limit: int = PSEUDO_QUERIES) -> list[PseudoQuery]:
    """Up to ``limit`` pseudo-queries, one per sampled document, from the chunks the build stored."""
    keys: list[str] = []
    for produced in kb.run_record.data.get("step_artifacts", {}).values():
        keys.extend(k for k in produced.get("chunk_keys", ()) if k not in keys)
    if len(keys) < MIN_DOCUMENTS or not kb.has_component("stores.objects"):
        return []
    objects = kb.get_component("stores.objects")
    rng = random.Random(0)
    chosen = sorted(keys)
    rng.shuffle(chosen)
    found: list[PseudoQuery] = []
    for key in chosen:
        if len(found) >= limit:
            break
        try:
            stored = objects.get_json(key)
        except Exception:  # a document removed since: skip it
            continue
        if not stored:
            continue
        chunk = chunk_from_dict(stored[rng.randrange(len(stored))])
        text = pseudo_query_text(chunk.text, rng)
        if text:
            found.append(PseudoQuery(text=text, document_id=chunk.document_id, language=detect_language(chunk.text)))
    return found


# --- how far the weights may move ------------------------------------------------

_LANGUAGE_CODES = {**STEMMED_LANGUAGES, **CJK_LANGUAGES}


def ranking_signals(mode: str) -> frozenset[str] | None:
    """What a built-in mode ranks by: ``"dense"`` (the embedding model's vectors) and/or ``"lexical"`` (the
    knowledge base's words); None for a mode we do not know.

    ``heta_graph_search`` is both: fact vectors, weighed by how many of the query's words their evidence
    chunks contain (its ``evidence_weight``), so pseudo-queries made of the knowledge base's words overrate
    it against plain vector search as they overrate full-text search.
    """
    assets = MODE_ASSETS.get(mode)
    if assets is None:
        return None
    signals = set()
    if CHUNK_VECTOR_INDEX in assets or GRAPH_VECTOR_INDEX in assets:
        signals.add("dense")
    if CHUNK_FULL_TEXT_INDEX in assets or CHUNK_TEXT_INDEX in assets or GRAPH_TABLES in assets:
        signals.add("lexical")
    return frozenset(signals)


def main_language(queries: Sequence[PseudoQuery]) -> str:
    """The language most pseudo-queries' chunks are written in ("" if none was detected)."""
    counts: dict[str, int] = {}
    for query in queries:
        if query.language:
            counts[query.language] = counts.get(query.language, 0) + 1
    return max(counts, key=lambda language: counts[language]) if counts else ""


@attrs.frozen
class WeightRange:
    """The ratios a calibration may choose from, the one that wins a tie, and why."""

    ratios: tuple[float, ...]
    reason: str
    #: of the ratios within ``TOLERANCE`` of the best, the one closest to this wins
    preferred: float = 1.0
    #: the leg (0 or 1) the pseudo-queries' bias favours, if any: a ratio weighing it more than ``preferred`` does
    #: is chosen only when it beats the others by more than ``BIAS_MARGIN``
    biased_leg: int | None = None

    def favours_biased_leg(self, ratio: float) -> bool:
        if self.biased_leg is None:
            return False
        return ratio > self.preferred if self.biased_leg == 1 else ratio < self.preferred


def ratio_range(legs: Sequence[str], model_languages: Any, language: str) -> WeightRange:
    """The ratios calibration may choose from for ``legs`` (see the module docstring, point 4).

    ``model_languages`` is the embedding client's ``languages`` (None: not declared).
    """
    kinds = [ranking_signals(leg) for leg in legs]
    if kinds[0] is None or kinds[1] is None or kinds[0] == kinds[1]:
        return WeightRange(RATIOS, "full range: both legs are of one kind")
    code = _LANGUAGE_CODES.get(language)
    if model_languages is not None and code is not None and code not in model_languages:
        return WeightRange(RATIOS, f"full range: the embedding model does not know {language}")
    lexical = 1 if _lexical_rank(kinds[1]) > _lexical_rank(kinds[0]) else 0
    # pseudo-queries always favour the more lexical leg, whether or not real questions do: a tilt that way is what
    # their bias predicts and says nothing, a tilt the other way is evidence despite it, and a tie means the
    # more lexical leg is overrated: the lighter weight wins it
    lighter = TOWARD_DENSER if lexical == 1 else 1.0 / TOWARD_DENSER
    if "dense" in (kinds[lexical] or ()):  # both dense, one also by words: a milder bias (module docstring, point 4)
        return WeightRange(MILD_RATIOS, f"mild: {legs[lexical]} also ranks by words, so either leg may gain or lose half "
                           "(and it loses half in a tie)", preferred=lighter, biased_leg=lexical)
    ratios = BOUNDED_RATIOS if lexical == 1 else tuple(1.0 / r for r in reversed(BOUNDED_RATIOS))
    reason = f"bounded: {legs[lexical]} ranks more by words, so it may only lose weight (and loses it in a tie)"
    return WeightRange(ratios, reason, preferred=lighter, biased_leg=lexical)


def _lexical_rank(signals: frozenset[str]) -> int:
    """0 for a dense-only leg, 1 for a leg that ranks by both, 2 for a words-only leg."""
    return ("lexical" in signals) + ("dense" not in signals)


def model_languages(kb: Any) -> Any:
    """The languages the knowledge base's embedding model declares, or None."""
    if not kb.has_component("models.embedding"):
        return None
    return getattr(kb.get_component("models.embedding"), "languages", None)


# --- choosing the weights --------------------------------------------------------


def reciprocal_rank(results: Sequence[QueryResult], document_id: str, cutoff: int = CUTOFF) -> float:
    seen: list[str] = []
    for result in results:
        doc = result.document_id or next((e.document_id for e in result.evidence if e.document_id), None)
        if doc is None or doc in seen:
            continue
        seen.append(doc)
        if doc == document_id:
            return 1.0 / len(seen)
        if len(seen) >= cutoff:
            break
    return 0.0


def _pair_weights(legs: Sequence[str], ratio: float) -> dict[str, float]:
    # the stronger side keeps weight 1, so a ratio never inflates scores
    return {legs[0]: 1.0 if ratio <= 1.0 else 1.0 / ratio, legs[1]: min(1.0, ratio)}


def _distance(ratio: float, preferred: float) -> float:
    if ratio == preferred:
        return 0.0
    return math.inf if ratio in (0.0, math.inf) else abs(math.log(ratio) - math.log(preferred))


def choose_weights(
    legs: Sequence[str],
    answers: Sequence[Mapping[str, Sequence[QueryResult]]],
    queries: Sequence[PseudoQuery],
    rrf_k: float = DEFAULT_RRF_K,
    weight_range: WeightRange = WeightRange(RATIOS, "full range"),
) -> Calibration:
    """The weight pair with the best fused MRR over ``answers`` (one mapping leg -> results per query),
    among ``weight_range.ratios`` (which must include 1.0, equal weights); of the ratios within
    ``TOLERANCE`` of the best, the one closest to ``weight_range.preferred``."""

    def mean(values: list[float]) -> float:
        return sum(values) / len(values) if values else 0.0

    def fused_mrr(weights: Mapping[str, float]) -> float:
        scores = []
        for answer, query in zip(answers, queries):
            # fused=True mirrors the engines: a leg that is itself a fusion (hybrid_search in heta_rerank_search) fuses
            # flat; a base leg's results carry no fusion ranks, so it is unaffected
            fused = reciprocal_rank_fusion([RankedList(leg, answer[leg], weights[leg], fused=True) for leg in legs], rrf_k=rrf_k)
            scores.append(reciprocal_rank(fused, query.document_id))
        return mean(scores)

    tried = {ratio: fused_mrr(_pair_weights(legs, ratio)) for ratio in weight_range.ratios}
    unbiased = {ratio: mrr for ratio, mrr in tried.items() if not weight_range.favours_biased_leg(ratio)}
    biased = {ratio: mrr for ratio, mrr in tried.items() if weight_range.favours_biased_leg(ratio)}
    # a tilt toward the leg the pseudo-queries flatter is taken only when it wins by more than their bias explains
    pool = biased if biased and max(biased.values()) > max(unbiased.values()) + BIAS_MARGIN else unbiased
    good_enough = [ratio for ratio, mrr in pool.items() if mrr >= max(pool.values()) - TOLERANCE]
    best_ratio = min(good_enough, key=lambda ratio: _distance(ratio, weight_range.preferred))
    best_mrr, equal = tried[best_ratio], tried[1.0]
    return Calibration(
        weights=_pair_weights(legs, best_ratio),
        pseudo_queries=len(queries),
        leg_mrr={leg: mean([reciprocal_rank(a[leg], q.document_id) for a, q in zip(answers, queries)]) for leg in legs},
        fused_mrr=best_mrr,
        equal_weights_mrr=equal,
        weight_range=weight_range.reason,
    )


def weights_metadata(weights: Mapping[str, float], calibration: Calibration | None, explicit: Any) -> dict[str, Any]:
    """What a fusing mode reports about its weights: the weights, where they came from, the calibration."""
    origin = "explicit" if explicit is not None else "calibrated" if calibration is not None else "default"
    found: dict[str, Any] = {"weights": dict(weights), "weights_origin": origin}
    if calibration is not None:
        found["calibration"] = calibration.to_dict()
    return found


# --- running it once per build state ---------------------------------------------

_memory: weakref.WeakKeyDictionary[Any, dict[tuple[str, str], Calibration | None]] = weakref.WeakKeyDictionary()
_locks: weakref.WeakKeyDictionary[Any, dict[tuple[str, Any], asyncio.Lock]] = weakref.WeakKeyDictionary()


#: the fields of a run that identify it; the run's document ids and step reports (about 770 KB at the 10k
#: bench tier) were serialised on every composed query and took 7 ms of each
_RUN_IDENTITY = ("id", "status", "started", "finished")


def state_key(kb: Any) -> str:
    """Identifies the committed build: its last run (id, status, times) and the search assets it left."""
    last_run = kb.run_record.last_run or {}
    data = {"last_run": {k: last_run.get(k) for k in _RUN_IDENTITY}, "assets": kb.run_record.data.get("search_assets"),
            "rule": RULE_VERSION}
    return hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode()).hexdigest()[:16]


def _read_cache(path: Path, state: str, mode: str) -> Calibration | None | Literal[False]:
    """The stored calibration (None: stored as "keep the defaults"), or False if there is none for this state."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    if data.get("state") != state or mode not in data.get("modes", {}):
        return False
    entry = data["modes"][mode]
    return None if entry is None else Calibration.from_dict(entry)


def _write_cache(path: Path, state: str, mode: str, calibration: Calibration | None) -> None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("state") != state:
            data = {}
    except (OSError, ValueError):
        data = {}
    data = {"state": state, "modes": {**data.get("modes", {}), mode: None if calibration is None else calibration.to_dict()}}
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        temporary.write_text(json.dumps(data, indent=1), encoding="utf-8")
        os.replace(temporary, path)
    except OSError:  # a read-only knowledge base: calibrate again next time, it is only slower
        log.info("could not keep the fusion calibration in %s", path)


def stored_calibrations(kb: Any) -> dict[str, Calibration | None]:
    """The calibrations kept for the committed build, by mode (None: the defaults were kept); none made yet: ``{}``."""
    try:
        data = json.loads((Path(kb.path) / CACHE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if data.get("state") != state_key(kb):
        return {}
    return {mode: None if entry is None else Calibration.from_dict(entry) for mode, entry in data.get("modes", {}).items()}


#: the option that sets a mode's weights by hand, where it is not ``hybrid_weights``
WEIGHTS_OPTION = {"fusion_search": "fusion_weights"}


def fusion_note(calibration: Calibration | None, mode: str = "hybrid_search") -> str | None:
    """One line on a calibration of ``mode`` that switched a leg off (weight 0), else None: a composed mode that is
    one of its legs is worth knowing about (``heta modes``)."""
    if calibration is None:
        return None
    off = [leg for leg, weight in calibration.weights.items() if weight == 0]
    if not off:
        return None
    kept = [leg for leg in calibration.weights if leg not in off]
    scores = ", ".join(f"{leg} {calibration.leg_mrr.get(leg, 0):.2f}" for leg in calibration.weights)
    return (f"calibration switched {', '.join(off)} off: it ranks as {', '.join(kept)} alone (MRR@10 on "
            f"{calibration.pseudo_queries} pseudo-queries: {scores}; equal weights {calibration.equal_weights_mrr:.2f}, "
            f"chosen {calibration.fused_mrr:.2f}). Pass {WEIGHTS_OPTION.get(mode, 'hybrid_weights')} to choose the weights yourself.")


#: the core modes whose fusion weights are calibrated, and their two legs (the keys of the engines' default weights)
CALIBRATED_MODES: Mapping[str, tuple[str, ...]] = {
    "hybrid_search": tuple(DEFAULT_HYBRID_WEIGHTS),
    "fusion_search": tuple(DEFAULT_FUSION_WEIGHTS),
    "heta_rerank_search": tuple(DEFAULT_RERANK_WEIGHTS),
}


def calibrated_modes(kb: Any) -> dict[str, tuple[str, ...]]:
    """The core fused modes ``kb`` can answer, with their legs; a mode a plugin answers instead is left out
    (its legs may differ)."""
    return {mode: legs for mode, legs in CALIBRATED_MODES.items()
            if mode in kb.available_queries and kb.query_engines.provider_of(mode) == CORE_DISTRIBUTION}


async def calibrate_available(kb: Any) -> dict[str, Calibration | None]:
    """Calibrate now every mode of ``calibrated_modes(kb)``, as its first query would: ``heta build`` then
    reports a leg switched off (``fusion_note``) and the first query does not wait for it. Nothing is
    computed twice: the calibration of a build state is kept, and a leg two modes share (``vector_search``
    in hybrid and fusion, ``full_text_search`` in fusion and rerank) answers each pseudo-query once for both."""
    calibrations: dict[str, Calibration | None] = {}
    shared: LegAnswers = {}
    for mode, legs in calibrated_modes(kb).items():
        request = QueryRequest(text="", mode=mode, top_k=CANDIDATES, filters={}, options={}, trace=False)
        calibrations[mode] = await calibrated_weights(QueryContext(kb, request), mode, legs, shared=shared)
    return calibrations


async def calibrated_weights(
    context: QueryContext, mode: str, legs: Sequence[str], leg_options: Mapping[str, Mapping[str, Any]] | None = None,
    *, shared: LegAnswers | None = None,
) -> Calibration | None:
    """This knowledge base's weights for fusing ``legs`` in ``mode``; None keeps the defaults (too little text).

    Calibrated at the default ``rrf_k``: the best ratio barely moves with it, and one calibration serves all.
    ``shared``: the legs' answers to pseudo-queries, kept across the calibrations of one build state.
    """
    kb = context.knowledge_base
    state = state_key(kb)
    memory = _memory.setdefault(kb, {})
    if (state, mode) in memory:
        return memory[(state, mode)]
    lock = _locks.setdefault(kb, {}).setdefault((mode, asyncio.get_running_loop()), asyncio.Lock())
    async with lock:  # one calibration at a time per mode: concurrent first queries wait for it
        if (state, mode) in memory:
            return memory[(state, mode)]
        cache = Path(kb.path) / CACHE_FILE
        stored = _read_cache(cache, state, mode)
        if stored is False:
            stored = await _calibrate(context, mode, legs, leg_options or {}, {} if shared is None else shared)
            _write_cache(cache, state, mode, stored)
        memory[(state, mode)] = stored
        return stored


async def _calibrate(
    context: QueryContext, mode: str, legs: Sequence[str], leg_options: Mapping[str, Mapping[str, Any]], shared: LegAnswers
) -> Calibration | None:
    kb = context.knowledge_base
    queries = await asyncio.to_thread(pseudo_queries, kb)
    if len(queries) < MIN_DOCUMENTS:
        return None
    gate = asyncio.Semaphore(_CONCURRENCY)

    async def answer(query: PseudoQuery) -> dict[str, Sequence[QueryResult]]:
        # an untraced context of its own, on the caller's call stack (recursion is still refused)
        request = QueryRequest(text=query.text, mode=mode, top_k=CANDIDATES, filters={}, options={}, trace=False)
        own = QueryContext(kb, request, context.stack[:-1])
        keys = {leg: (query.text, leg, json.dumps(leg_options.get(leg, {}), sort_keys=True, default=str)) for leg in legs}
        missing = [leg for leg in legs if keys[leg] not in shared]
        async with gate:
            responses = await asyncio.gather(
                *(own.query(query.text, mode=leg, top_k=CANDIDATES, options=dict(leg_options.get(leg, {}))) for leg in missing)
            )
        for leg, response in zip(missing, responses):
            shared[keys[leg]] = response.results
        return {leg: shared[keys[leg]] for leg in legs}

    answers = await asyncio.gather(*(answer(q) for q in queries))
    calibration = choose_weights(legs, answers, queries, weight_range=ratio_range(legs, model_languages(kb), main_language(queries)))
    log.info("fusion weights for %s calibrated on %d pseudo-queries: %s", mode, len(queries), calibration.to_dict())
    return calibration
