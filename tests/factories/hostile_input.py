"""Valid inputs of every JSON reader with raw JSON text spliced in, and the command that reads each.

Shared by the fuzz tier (tests/fuzz/test_raw_json.py draws the text) and the regression tests
of hostile local input (tests/cli/test_hostile_input.py): ``READERS[name](folder, raw, place)``
writes the input into ``folder`` and returns the CLI arguments that read it.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Callable
from pathlib import Path

from tests.factories.bench_runs import (
    ab_eval_args,
    ab_rows,
    ab_spec_parts,
    dflash_runs,
    eval_spec,
    llama_rows,
    write_csv,
    write_jsonl,
)
from tests.factories.cards import matrix_evaluation
from tests.factories.releases import write_release


def splice(document: dict[str, object], raw: str, place: str) -> str:
    """``document``'s JSON text with ``raw`` as a new key's value, or as its first or last key's."""
    keys = list(document)
    if place == "extra" or not keys:
        return json.dumps(document)[:-1] + f', "extra": {raw}}}'
    key = keys[0] if place == "first" else keys[-1]
    marker = "\x00MARK\x00"
    return json.dumps({**document, key: marker}).replace(json.dumps(marker), raw)


Build = Callable[[Path, str, str], list[str]]


def bench_serving(root: Path, raw: str, place: str) -> list[str]:
    runs = dflash_runs()
    (root / "df.jsonl").write_text(splice(runs[0], raw, place) + "\n" + json.dumps(runs[1]) + "\n")
    return ["build", "eval", str(root / "df.jsonl"), "--hardware", "GPU", "--out", str(root / "o.json")]


def llama_server(root: Path, raw: str, place: str) -> list[str]:
    rows = ab_rows()
    lines = [splice(rows[0], raw, place), *(json.dumps(r) for r in rows[1:])]
    (root / "ab.jsonl").write_text("\n".join(lines) + "\n")
    return ab_eval_args(root / "ab.jsonl", root / "o.json")


def spec(root: Path, raw: str, place: str) -> list[str]:
    write_csv(root / "ab.csv", ab_rows())
    write_jsonl(root / "sweep.jsonl", llama_rows(arms={"S": [1]}, n_max_values=(0, 3)))
    (root / "spec.json").write_text(splice(eval_spec(**ab_spec_parts()), raw, place))
    args = [
        "build",
        "eval",
        str(root / "ab.csv"),
        str(root / "sweep.jsonl"),
        "--spec",
        str(root / "spec.json"),
    ]
    return [*args, "--out", str(root / "o.json")]


def evaluation(command: str) -> Build:
    def build(root: Path, raw: str, place: str) -> list[str]:
        (root / "evaluation.json").write_text(splice(matrix_evaluation(), raw, place))
        extra: dict[str, object] | None = (
            {"evaluations": ["evaluation.json"]} if command == "render-card" else None
        )
        manifest = write_release(root, {"model.safetensors": b"\0" * 16}, extra_manifest=extra)
        if command == "add":
            return ["add", str(manifest), str(root / "evaluation.json")]
        return ["render-card", str(manifest), "--check"]

    return build


def init(root: Path, raw: str, place: str) -> list[str]:
    (root / "config.json").write_text(
        splice({"architectures": ["LlamaForCausalLM"], "hidden_size": 64}, raw, place)
    )
    (root / "w.bin").write_bytes(b"w")
    return ["init", str(root), "--repo-id", "acme/fuzz"]


def write_safetensors(path: Path, header: str, data: int = 4) -> None:
    raw = header.encode("utf-8", "surrogatepass")
    path.write_bytes(struct.pack("<Q", len(raw)) + raw + b"\0" * data)


def safetensors_header(root: Path, raw: str, place: str) -> list[str]:
    tensor = {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}
    write_safetensors(root / "model.safetensors", splice({"a": tensor}, raw, place))
    return ["inspect", str(root / "model.safetensors")]


def index(root: Path, raw: str, place: str) -> list[str]:
    write_safetensors(root / "model-1.safetensors", '{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}')
    weight_map = splice({"a": "model-1.safetensors"}, raw, place)
    (root / "model.safetensors.index.json").write_text('{"metadata": {}, "weight_map": ' + weight_map + "}")
    return ["inspect", str(root / "model.safetensors.index.json")]


READERS: dict[str, Build] = {
    "bench_serving": bench_serving,
    "llama_server": llama_server,
    "spec": spec,
    "render-card": evaluation("render-card"),
    "add": evaluation("add"),
    "init": init,
    "safetensors": safetensors_header,
    "index": index,
}
