"""The budget of a tool loop: every limit is an option with a default, checked before each model turn or tool call."""

from __future__ import annotations

import attrs
from heta_framework.common.validators import boolean, number, positive_whole_number, result_count


@attrs.frozen
class AgentOptions:
    """``agent_search`` and ``wiki_agent_search``: how far the model may go before it must answer."""

    #: model turns in the tool loop (each may ask for several tool calls); the synthesis is one more call
    max_steps: int = attrs.field(default=6, validator=positive_whole_number)
    #: tool calls run in all; calls asked for beyond it are refused (``agent_over_budget``)
    max_tool_calls: int = attrs.field(default=12, validator=positive_whole_number)
    #: prompt + completion tokens the loop may spend, as the server reports them; the synthesis is not counted
    max_tokens: int = attrs.field(default=40_000, validator=positive_whole_number)
    #: seconds of wall time for the loop; a turn is not started past it
    wall_time: float = attrs.field(default=60.0, validator=number(above=0))
    #: results a search tool returns to the model at most
    tool_top_k: int = attrs.field(default=5, validator=result_count())
    #: characters of each result's text shown to the model (the evidence keeps the whole text)
    result_chars: int = attrs.field(default=600, validator=positive_whole_number)
    #: read each tool turn as a stream (for servers and proxies that answer tool calls best, or only, that way)
    stream: bool = attrs.field(default=False, validator=boolean)
