"""``GET /v2/<repo>/manifests/<tag>``: the Hub's GGUF tag resolution, as llama.cpp's ``-hf`` asks for it.

llama.cpp (``common_get_hf_file`` in ``common/arg.cpp`` up to the b5xxx releases; ik_llama.cpp and
other forks keep it) sends ``User-Agent: llama-cpp`` and ``Accept: application/json`` and reads
``ggufFile.rfilename`` (and ``mmprojFile.rfilename``) from the answer; Ollama's ``hf.co/USER/REPO:TAG``
uses the same route with a registry manifest instead. What the Hub documents
(huggingface.co/docs/hub/ollama, "Custom Quantization"): the tag is a quantization, case-insensitive;
``latest`` (no tag) is Q4_K_M when the repo has it, else "one reasonable quant" of the repo. The
quantization of a file is the label the Hub's own code reads from its name: the last match of the
ggml type names in the upper-cased name (huggingface.js ``packages/gguf`` ``parseGGUFQuantLabel``),
so ``drafter-q8_0.gguf`` is ``Q8_0`` and an ik type such as ``IQ2_KS`` reads as ``Q2_K``.
Split sets answer with their first shard. When two files carry the tag the first in path order is
given, as one answer must be (``hubrelease lint`` flags such a release).
"""

from __future__ import annotations

import re
from typing import Any

from hubrelease_loopback.store import StoreError
from hubrelease_loopback.wire import Request, Response, json_response

# huggingface.js packages/gguf/src/types.ts GGMLQuantizationType, in its order (the regex alternation's).
_GGML_TYPES = (
    *("F32", "F16", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "Q8_1", "Q2_K", "Q3_K", "Q4_K", "Q5_K", "Q6_K"),
    *("Q8_K", "IQ2_XXS", "IQ2_XS", "IQ3_XXS", "IQ1_S", "IQ4_NL", "IQ3_S", "IQ2_S", "IQ4_XS", "I8", "I16"),
    *("I32", "I64", "F64", "IQ1_M", "BF16"),
)
_QUANT = re.compile(f"(?:{'|'.join(_GGML_TYPES)})(?:_[A-Z]+)?")
_SHARD = re.compile(r"-(\d{5})-of-(\d{5})\.gguf$", re.IGNORECASE)
DEFAULT_TAG = "Q4_K_M"
NO_TAG = 'The specified tag is not available in the repository. Please use another tag or "latest"'
NOT_GGUF = "Repository is not GGUF or is not compatible with llama.cpp"


def quant_label(path: str) -> str | None:
    """The quantization the Hub reads from a file name (the last ggml type name in it), or None."""
    found = _QUANT.findall(path.rsplit("/", 1)[-1].upper())
    return found[-1] if found else None


def _first_shard(path: str) -> bool:
    shard = _SHARD.search(path)
    return shard is None or int(shard.group(1)) == 1


def resolve_tag(paths: list[str], tag: str) -> tuple[str | None, str | None]:
    """(model file, mmproj file) the Hub answers for ``tag`` among the repo's ``paths``."""
    ggufs = sorted(p for p in paths if p.lower().endswith(".gguf") and _first_shard(p))
    models = [p for p in ggufs if "mmproj" not in p.lower()]
    projectors = [p for p in ggufs if "mmproj" in p.lower()]
    wanted = DEFAULT_TAG if tag == "latest" else tag.upper()
    chosen = next((p for p in models if quant_label(p) == wanted), None)
    if chosen is None and tag == "latest" and models:
        chosen = models[0]
    return chosen, projectors[0] if projectors else None


def manifest(request: Request) -> Response:
    key = request.require_repo()
    _, tree = request.hub.store.tree(key, "main")
    if not any(p.lower().endswith(".gguf") for p in tree):
        raise StoreError(400, NOT_GGUF)
    model, mmproj = resolve_tag(list(tree), request.arg("tag"))
    if model is None:
        raise StoreError(400, NO_TAG)
    payload: dict[str, Any] = {"ggufFile": _file(model, tree[model])}
    if mmproj is not None:
        payload["mmprojFile"] = _file(mmproj, tree[mmproj])
    return json_response(payload)


def _file(path: str, entry: dict[str, Any]) -> dict[str, Any]:
    described: dict[str, Any] = {"rfilename": path, "blobId": entry["oid"], "size": entry["size"]}
    if entry["lfs"]:
        described["lfs"] = {"sha256": entry["lfs"], "size": entry["size"]}
    return described
