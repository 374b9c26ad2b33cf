"""The bounded tool loop: the model sees the tools, asks for calls, reads their results, until it stops or a limit
is reached. Whatever the model does, the loop ends normally: a bad call becomes an issue with a stable code and a
tool message telling the model what went wrong, and everything the tools returned stays in the ledger.

Issue codes: ``agent_unknown_tool``, ``agent_malformed_arguments``, ``agent_over_budget`` (a call past
``max_tool_calls``), ``agent_repeated_call`` (the same call again; the second repeat ends the loop),
``agent_budget_exhausted`` (``max_steps``, ``max_tokens`` or ``wall_time``), ``agent_tool_failed``,
``agent_model_failed``.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Sequence
from typing import Any

import attrs
from heta_framework.common.models import LanguageClient, Message, ToolCall, complete_with_tools
from heta_framework.kb.search import QueryResult, query_issue

from heta_plugin_wiki.agent.ledger import Ledger, TraceEntry
from heta_plugin_wiki.agent.options import AgentOptions
from heta_plugin_wiki.agent.tools import Tool, ToolError, check_arguments

#: a call repeated this many times ends the loop: a model that asks the same thing again will not stop by itself
REPEATS_BEFORE_STOP = 2


@attrs.define
class Usage:
    model_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def add(self, reply: Any) -> None:
        self.model_calls += 1
        self.prompt_tokens += reply.prompt_tokens
        self.completion_tokens += reply.completion_tokens

    def to_dict(self) -> dict[str, int]:
        return attrs.asdict(self)


@attrs.define
class LoopOutcome:
    ledger: Ledger
    trace: list[TraceEntry]
    issues: list[dict[str, Any]]
    usage: Usage
    #: the model's own closing text when it stopped calling tools, else ``None`` (it ran out of budget)
    final_text: str | None
    #: why the loop ended: answered, max_steps, max_tokens, wall_time, repeated_calls, model_failed
    stopped: str


class ToolLoop:
    def __init__(self, model: LanguageClient, tools: Sequence[Tool], options: AgentOptions, *,
                 describe_error: Callable[[BaseException], str] = lambda exc: type(exc).__name__,
                 clock: Callable[[], float] = time.monotonic, ledger: Ledger | None = None):
        self.model = model
        self.tools = {tool.name: tool for tool in tools}
        self.options = options
        self.describe_error = describe_error  # scrubs secrets from an exception's text
        self.clock = clock
        self.ledger = ledger if ledger is not None else Ledger()
        self.trace: list[TraceEntry] = []
        self.issues: list[dict[str, Any]] = []
        self.usage = Usage()
        self.calls_run = 0
        self.repeats = 0
        self.seen: dict[str, tuple[str, ...]] = {}

    async def run(self, system_prompt: str, question: str) -> LoopOutcome:
        messages = [Message("system", system_prompt), Message("user", question)]
        specs = [tool.spec for tool in self.tools.values()]
        started = self.clock()
        for step in range(1, self.options.max_steps + 1):
            left = self.options.wall_time - (self.clock() - started)
            if left <= 0:
                return self._exhausted("wall_time", step)
            if self.usage.tokens >= self.options.max_tokens:
                return self._exhausted("max_tokens", step)
            try:
                reply = await asyncio.wait_for(complete_with_tools(self.model, messages, specs, stream=self.options.stream), timeout=left)
            except TimeoutError:
                return self._exhausted("wall_time", step)
            except Exception as exc:  # a lost model ends the loop; what the tools found is still evidence
                self.issues.append(query_issue("agent_model_failed", f"Step {step}: the language model call failed "
                                               f"({self.describe_error(exc)}).", "stopped_loop", step=step))
                return self._outcome(None, "model_failed")
            self.usage.add(reply)
            if not reply.tool_calls:
                return self._outcome(reply.text, "answered")
            messages.append(Message("assistant", reply.text, tool_calls=reply.tool_calls))
            for call in reply.tool_calls:
                # every call asked for gets an answer, even a refused one: the chat API requires a tool message per call
                messages.append(Message("tool", await self._call(step, call, started), tool_call_id=call.id))
            if self.repeats >= REPEATS_BEFORE_STOP:
                self.issues.append(query_issue("agent_repeated_call", f"Step {step}: the model kept repeating calls it had "
                                               "made; the loop stopped.", "stopped_loop", step=step))
                return self._outcome(None, "repeated_calls")
        return self._exhausted("max_steps", self.options.max_steps)

    async def _call(self, step: int, call: ToolCall, started: float) -> str:
        tool = self.tools.get(call.name)
        if tool is None:
            return self._refuse(step, call.name, call.arguments, "agent_unknown_tool",
                                f"there is no tool {call.name!r}; the tools are {', '.join(sorted(self.tools))}")
        try:
            arguments = json.loads(call.arguments or "{}")
        except ValueError:
            return self._refuse(step, call.name, call.arguments, "agent_malformed_arguments", "the arguments are not valid JSON")
        problem = check_arguments(tool.spec, arguments)
        if problem is not None:
            return self._refuse(step, call.name, arguments, "agent_malformed_arguments", problem)
        key = json.dumps([call.name, arguments], sort_keys=True, ensure_ascii=False)
        if key in self.seen:
            self.repeats += 1
            self._refuse(step, call.name, arguments, "agent_repeated_call", "this exact call was already made")
            return _tool_reply({"error": "You already made this exact call.", "result_ids": list(self.seen[key])})
        if self.calls_run >= self.options.max_tool_calls:
            return self._refuse(step, call.name, arguments, "agent_over_budget",
                                f"the budget of {self.options.max_tool_calls} tool calls is spent; answer now", code_action="refused_call")
        self.calls_run += 1
        begun = time.perf_counter()
        left = self.options.wall_time - (self.clock() - started)
        try:
            output = await asyncio.wait_for(tool.run(arguments), timeout=max(left, 0.001))
        except ToolError as exc:  # the tool's own refusal (no such document): the model reads why and may try again
            self.seen[key] = ()
            self.trace.append(TraceEntry(step, call.name, arguments, (), _ms(begun), str(exc)))
            return _tool_reply({"error": str(exc)})
        except TimeoutError:
            self.trace.append(TraceEntry(step, call.name, arguments, (), _ms(begun), "wall time spent"))
            self.issues.append(query_issue("agent_budget_exhausted", f"Step {step}: the wall time ran out during {call.name}.",
                                           "refused_call", limit="wall_time", step=step))
            return _tool_reply({"error": "The time budget is spent; answer now."})
        except Exception as exc:
            why = self.describe_error(exc)
            self.trace.append(TraceEntry(step, call.name, arguments, (), _ms(begun), why))
            self.issues.append(query_issue("agent_tool_failed", f"Step {step}: the tool {call.name} failed ({why}).",
                                           "skipped_call", step=step, tool=call.name))
            return _tool_reply({"error": f"The tool failed ({why})."})
        ids = self.ledger.add(output.results)
        self.seen[key] = tuple(ids)
        self.trace.append(TraceEntry(step, call.name, arguments, tuple(ids), _ms(begun)))
        return _tool_reply(_shown(output.results, self.options.result_chars, output.note))

    def _refuse(self, step: int, tool: str, arguments: Any, code: str, why: str, code_action: str = "refused_call") -> str:
        self.trace.append(TraceEntry(step, tool, arguments, (), 0.0, why))
        self.issues.append(query_issue(code, f"Step {step}: a call to {tool!r} was refused: {why}.", code_action, step=step, tool=tool))
        return _tool_reply({"error": why})

    def _exhausted(self, limit: str, step: int) -> LoopOutcome:
        self.issues.append(query_issue("agent_budget_exhausted", f"The tool loop reached its {limit} limit at step {step} "
                                       "without the model finishing; the answer rests on what the tools found so far.",
                                       "stopped_loop", limit=limit, step=step))
        return self._outcome(None, limit)

    def _outcome(self, final_text: str | None, stopped: str) -> LoopOutcome:
        return LoopOutcome(self.ledger, self.trace, self.issues, self.usage, final_text, stopped)


def _shown(results: Sequence[QueryResult], chars: int, note: str) -> dict[str, Any]:
    shown: dict[str, Any] = {"results": [
        {"id": r.id, "kind": r.kind, "document_id": r.document_id, "text": r.text[:chars], **_extra(r)} for r in results
    ]}
    if note:
        shown["note"] = note
    if not results and not note:
        shown["note"] = "Nothing found."
    return shown


def _extra(result: QueryResult) -> dict[str, Any]:
    title = result.metadata.get("title")
    return {"title": title} if title else {}


def _tool_reply(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _ms(begun: float) -> float:
    return (time.perf_counter() - begun) * 1000
