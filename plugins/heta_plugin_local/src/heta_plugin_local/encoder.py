"""Turn a sentence-transformers folder into unit vectors, with transformers alone when the folder allows it.

Most embedding folders are a plain pipeline: a Transformer encoder, one pooling
mode (mean, CLS, max or mean/sqrt(length)) and an optional Normalize. For those,
``TransformerEncoder`` runs the encoder and pools with torch directly. Importing
``sentence_transformers`` pulls in scikit-learn, SciPy, pandas and pyarrow for
training and evaluation code a build never calls: 228 MB of resident memory and
about 4 s of import in every process that embeds (measured with MiniLM; issue 14).
The vectors are sentence-transformers' own within float rounding (a test
compares them).

Anything else (dense layers, a default prompt, lower-casing, a decoder model, a
router) loads through ``SentenceTransformer`` as before (``SentenceTransformerEncoder``).

``TransformerEncoder`` runs the encoder as a TorchScript trace when the trace gives
the eager model's outputs (``traced_forward``). An eager forward goes back to Python
between its few hundred ops, and each return needs the GIL: with one other thread
running Python beside it (a server answering other queries), one MiniLM query took
159 ms eager against 21 ms traced at the median, and 8 queries 113 against 64 ms
(bench/bench_encoder_beside_python.py). Alone, traced is a little faster too
(7.2 against 8.4 ms for one query; build batches the same).
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np
from heta_framework.kb.atomic import read_json

log = logging.getLogger(__name__)

_TRANSFORMER = "sentence_transformers.models.Transformer"
_POOLING = "sentence_transformers.models.Pooling"
_NORMALIZE = "sentence_transformers.models.Normalize"
#: pooling modes computed here: the rest (weighted mean, last token) go to sentence-transformers
POOLING_MODES = ("pooling_mode_mean_tokens", "pooling_mode_cls_token", "pooling_mode_max_tokens", "pooling_mode_mean_sqrt_len_tokens")
#: bidirectional encoders padded on the right, as sentence-transformers runs them
ENCODER_TYPES = frozenset({"bert", "roberta", "xlm-roberta", "camembert", "distilbert", "mpnet", "electra", "deberta", "deberta-v2"})


class Encoder(Protocol):
    """What the local client needs from a loaded model."""

    @property
    def dimension(self) -> int: ...

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Unit-length float32 vectors, one row per text, in one forward pass."""
        ...


def plain_pooling(folder: Path) -> tuple[str, int | None] | None:
    """``(pooling mode, max_seq_length)`` if ``folder`` is a plain encoder + pooling (+ normalize) pipeline,
    else None (load it with sentence-transformers). A file that is not JSON raises ``ValueError``."""
    modules = read_json(folder / "modules.json")
    if not isinstance(modules, list) or not modules:
        return None
    types = [m.get("type") for m in modules if isinstance(m, dict)]
    if types not in ([_TRANSFORMER, _POOLING], [_TRANSFORMER, _POOLING, _NORMALIZE]) or modules[0].get("path") not in ("", "."):
        return None
    transformer = read_json(folder / "sentence_bert_config.json") or {}
    if transformer.get("do_lower_case") or set(transformer) - {"max_seq_length", "do_lower_case"}:
        return None
    settings = read_json(folder / "config_sentence_transformers.json") or {}
    if settings.get("default_prompt_name"):
        return None  # sentence-transformers would put a prompt in front of every text
    config = read_json(folder / "config.json") or {}
    if config.get("model_type") not in ENCODER_TYPES or config.get("is_decoder"):
        return None
    pooling = read_json(folder / str(modules[1].get("path", "")) / "config.json") or {}
    chosen = [mode for mode in POOLING_MODES if pooling.get(mode)]
    others = {k for k, v in pooling.items() if k.startswith("pooling_mode_") and k not in POOLING_MODES and v}
    if len(chosen) != 1 or others or pooling.get("include_prompt") is False:
        return None
    return chosen[0], transformer.get("max_seq_length")


class TransformerEncoder:
    """A plain sentence-transformers pipeline run with transformers and torch (see the module docstring)."""

    def __init__(self, folder: Path, pooling: str, max_seq_length: int | None, device: str = "cpu"):
        from transformers import AutoModel, AutoTokenizer

        self.tokenizer = AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
        self.model = AutoModel.from_pretrained(str(folder), local_files_only=True).to(device).eval()
        self.device = device
        self.pooling = pooling
        limits = [n for n in (max_seq_length, getattr(self.model.config, "max_position_embeddings", None)) if n]
        self.max_length = min(limits) if limits else self.tokenizer.model_max_length
        #: the forward pass used: the trace when it matches the eager model, else the model itself
        self.forward: Callable[..., Any] = traced_forward(self.model, self._features) or self.model

    def _features(self, texts: Sequence[str]) -> Any:
        return self.tokenizer(
            list(texts), padding=True, truncation="longest_first", max_length=self.max_length, return_tensors="pt"
        ).to(self.device)

    @property
    def dimension(self) -> int:
        return int(self.model.config.hidden_size)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        import torch

        with torch.inference_mode():
            features = self._features(texts)
            tokens = _token_states(self.forward(**features))
            mask = features["attention_mask"].unsqueeze(-1).expand(tokens.size()).to(tokens.dtype)
            if self.pooling == "pooling_mode_cls_token":
                pooled = tokens[:, 0]
            elif self.pooling == "pooling_mode_max_tokens":
                pooled = torch.max(tokens.masked_fill(mask == 0, -1e9), 1).values
            else:
                summed, counts = torch.sum(tokens * mask, 1), torch.clamp(mask.sum(1), min=1e-9)
                pooled = summed / (torch.sqrt(counts) if self.pooling == "pooling_mode_mean_sqrt_len_tokens" else counts)
            return torch.nn.functional.normalize(pooled, p=2, dim=1).float().cpu().numpy()


#: what a trace is checked on before it is used: a padded batch (the trace is taken on one, so the padding
#: mask is part of it), one text alone (no padding) and a batch of three lengths
_TRACE_EXAMPLE = ["a", "a somewhat longer sentence, so that the first one is padded"]
_TRACE_CHECKS = (_TRACE_EXAMPLE, ["one text alone"], ["short", "a text of middling length here", "x " * 40])
#: largest difference from the eager model a trace may show on those checks (traces measured 0.0)
_TRACE_TOLERANCE = 1e-5


def _token_states(output: Any) -> Any:
    return output["last_hidden_state"] if isinstance(output, dict) else output[0]


def traced_forward(model: Any, features: Callable[[Sequence[str]], Any]) -> Callable[..., Any] | None:
    """``model`` traced with TorchScript, or None when tracing fails or the trace's outputs differ from the model's.

    The trace is taken on a padded batch and checked against the eager model on
    ``_TRACE_CHECKS``; a model whose forward branches on its input in a way the
    trace cannot follow shows up there and keeps running eagerly.
    """
    import torch

    try:
        from transformers.utils import logging as transformers_logging

        verbosity = transformers_logging.get_verbosity()
        transformers_logging.set_verbosity_error()  # tracing reads attributes that log notes meant for training
        try:
            with torch.inference_mode(), warnings.catch_warnings():
                warnings.simplefilter("ignore")  # TracerWarnings about the branches the checks below verify
                trace = torch.jit.trace(model, example_kwarg_inputs=dict(features(_TRACE_EXAMPLE)), strict=False, check_trace=False)
                for texts in _TRACE_CHECKS:
                    batch = features(texts)
                    difference = float((_token_states(trace(**batch)) - _token_states(model(**batch))).abs().max())
                    if not difference <= _TRACE_TOLERANCE:
                        log.info("the TorchScript trace of %s differs from the model by %g; running it eagerly",
                                 type(model).__name__, difference)
                        return None
        finally:
            transformers_logging.set_verbosity(verbosity)
    except Exception as exc:  # noqa: BLE001 - any tracing failure: the eager model still works
        log.info("could not trace %s with TorchScript (%s); running it eagerly", type(model).__name__, exc)
        return None
    return trace


class SentenceTransformerEncoder:
    """Any other sentence-transformers folder, through ``SentenceTransformer`` itself."""

    def __init__(self, model: Any):
        self.model = model

    @property
    def dimension(self) -> int:
        getter = getattr(self.model, "get_embedding_dimension", None) or self.model.get_sentence_embedding_dimension
        return int(getter())

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        return np.asarray(self.model.encode(list(texts), batch_size=len(texts), normalize_embeddings=True, convert_to_numpy=True,
                                            show_progress_bar=False), dtype=np.float32)
