"""``JsonLlmCaller`` on its own: its retries for providers that do not retry, and its cache."""

from __future__ import annotations

from collections import Counter

from heta_framework.common.models import Completion, Message
from heta_framework.common.retry import RetryPolicy
from heta_framework.errors import ModelError
from heta_plugin_graph.llm.cache import LlmCache
from heta_plugin_graph.llm.calls import JsonLlmCaller, is_retryable


class FlakyClient:
    model_name = "fake/flaky"

    def __init__(self, failures):
        self.failures = list(failures)
        self.calls = 0

    async def complete(self, messages, *, json_schema=None, temperature=0.0, max_tokens=None):
        self.calls += 1
        if self.failures:
            raise self.failures.pop(0)
        return Completion(text='{"ok": true}', prompt_tokens=3, completion_tokens=1)


class StatusError(Exception):
    def __init__(self, status_code):
        super().__init__(f"status {status_code}")
        self.status_code = status_code


def caller(client, tmp_path, stats):
    return JsonLlmCaller(
        client, counter=lambda name, amount: stats.update({name: amount}), cache=LlmCache.in_folder(tmp_path),
        prompt_version="v1", concurrency=2, retry=RetryPolicy(max_attempts=4, initial_delay=0.0, max_delay=0.0),
    )


def test_what_is_worth_retrying():
    assert is_retryable(TimeoutError()) and is_retryable(StatusError(429)) and is_retryable(StatusError(503))
    assert not is_retryable(StatusError(400)) and not is_retryable(ValueError("bad"))
    assert not is_retryable(ModelError("the provider already retried"))


async def test_transient_errors_are_retried_and_answers_cached(tmp_path):
    stats: Counter = Counter()
    client = FlakyClient([TimeoutError(), StatusError(429), StatusError(502)])
    call = caller(client, tmp_path, stats)
    kwargs = dict(kind="test", subject_text="chunk", messages=[Message("user", "hi")], schema={"type": "object"}, validate=lambda v: None)
    outcome = await call.call(**kwargs)
    assert outcome.status == "valid" and outcome.value == {"ok": True}
    assert client.calls == 4 and stats["llm_calls"] == 4 and stats["prompt_tokens"] == 3
    again = await caller(client, tmp_path, stats).call(**kwargs)
    assert again.cached and again.value == {"ok": True} and client.calls == 4 and stats["cache_hits"] == 1


async def test_a_final_failure_is_an_outcome_not_an_exception(tmp_path):
    stats: Counter = Counter()
    client = FlakyClient([ModelError("gave up after 4 attempts")])
    outcome = await caller(client, tmp_path, stats).call(
        kind="test", subject_text="chunk", messages=[Message("user", "hi")], schema={}, validate=lambda v: None
    )
    assert outcome.status == "call_failed" and "gave up" in outcome.error and client.calls == 1
    # a failed call is not cached: the next build asks again
    assert len(LlmCache.in_folder(tmp_path)) == 0
