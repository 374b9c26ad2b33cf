"""``stream_answer`` on its own: every way an answer can end, with fake knowledge bases and language clients."""

from __future__ import annotations

from heta_framework.common.model_streaming import CompletionDelta
from heta_framework.common.models import Completion
from heta_framework.contracts.search import Citation, QueryResponse, QueryResult
from heta_server.answer_stream import AnswerEnd, Piece, stream_answer

SECRET = "sk-very-secret-7f3a9c"
RESULTS = (QueryResult(id="a-0", text="Fleming found penicillin in 1928.", score=1.0, metadata={"document_id": "a"}),
           QueryResult(id="b-0", text="Whales breathe air.", score=0.5, metadata={"document_id": "b"}))


class FakeKB:
    def __init__(self, model=None):
        self.model = model

    def has_component(self, key: str) -> bool:
        return key == "models.language" and self.model is not None

    def get_component(self, key: str):
        return self.model

    def secrets(self) -> list:
        return [SECRET]


class Whole:
    """A language client without ``stream``: its whole answer comes as one piece."""

    model_name = "fake/whole"

    async def complete(self, messages, *, json_schema=None, temperature=0.0, max_tokens=None):
        assert json_schema is None  # streamed answers are plain text with [n] markers
        return Completion("Fleming [1], not whales [2].", prompt_tokens=30, completion_tokens=7)


class Failing:
    model_name = "fake/failing"

    async def stream(self, messages, *, temperature=0.0, max_tokens=None):
        yield CompletionDelta("Fleming ")
        yield CompletionDelta("[1]")
        raise RuntimeError(f"connection reset talking with key {SECRET}")


async def collect(kb, response, wanted=True) -> list:
    return [item async for item in stream_answer(kb, "Who found penicillin?", response, wanted=wanted)]


async def test_a_client_without_stream_answers_in_one_piece_with_citations_from_its_markers():
    items = await collect(FakeKB(Whole()), QueryResponse(results=RESULTS))
    assert items[0] == Piece("Fleming [1], not whales [2].")
    end = items[-1]
    assert isinstance(end, AnswerEnd) and end.error is None and len(items) == 2
    assert [(c.marker, c.result_id) for c in end.citations] == [("[1]", "a-0"), ("[2]", "b-0")]
    assert end.usage()["total_tokens"] == 37


async def test_an_answer_the_mode_wrote_itself_is_passed_on_without_a_model_call():
    own = QueryResponse(results=RESULTS, answer="Fleming did [1].", citations=(Citation("[1]", "a-0", "Fleming"),))
    items = await collect(FakeKB(Failing()), own)  # the failing model would fail the test if it were called
    assert items == [Piece("Fleming did [1]."), AnswerEnd("Fleming did [1].", (Citation("[1]", "a-0", "Fleming"),))]


async def test_no_answer_asked_no_model_no_results():
    assert await collect(FakeKB(Failing()), QueryResponse(results=RESULTS), wanted=False) == [AnswerEnd(None)]
    (unavailable,) = await collect(FakeKB(None), QueryResponse(results=RESULTS))
    assert [i["code"] for i in unavailable.issues] == ["answer_unavailable"] and unavailable.answer is None
    *_, empty = await collect(FakeKB(Whole()), QueryResponse(results=()))
    assert [i["code"] for i in empty.issues] == ["answer_no_evidence"] and empty.answer


async def test_a_failure_mid_stream_ends_with_the_partial_answer_and_no_secret():
    items = await collect(FakeKB(Failing()), QueryResponse(results=RESULTS))
    assert items[:2] == [Piece("Fleming "), Piece("[1]")]
    end = items[-1]
    assert end.answer == "Fleming [1]" and [c.result_id for c in end.citations] == ["a-0"]
    assert end.error["code"] == "RuntimeError" and SECRET not in end.error["message"] and "***" in end.error["message"]
    assert [i["code"] for i in end.issues] == ["answer_failed"]
