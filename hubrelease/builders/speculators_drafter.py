"""DFlash / DFlash2 checkpoint -> a speculators-format drafter (``config.json`` + safetensors) for vLLM.

vLLM serves a speculator from the config that Red Hat's ``speculators`` (PyPI 0.9.0) defines:
``speculators_model_type``, ``transformer_layer_config`` (the draft decoder), ``aux_hidden_state_layer_ids``,
``block_size``, ``mask_token_id`` and ``speculators_config {algorithm, proposal_methods,
default_proposal_method, verifier {name_or_path, architectures}}``. The config written here is what
speculators' own DFlash converter builds (``speculators/convert/dflash/converter.py:81-149``), with
three deliberate differences:

- a verifier layer id equal to the verifier's depth is refused, not dropped: the converter's filter
  (``:124-126``) keeps ``fc.weight`` K x H wide while ``DFlashDraftModel`` sizes ``fc`` from the ids it
  kept (``models/dflash/core.py:122-126``), so a dropped id cannot load anyway, and hubrelease refuses
  the last layer everywhere (``lint.target``);
- DFlash2 is written too (``speculators_model_type: dflash2``, the conv and selector fields of
  ``DFlash2SpeculatorConfig`` from ``dflash_config``, ``sliding_window_non_causal`` true as its default
  and its trainer's ``default_non_causal``, ``models/dflash/core.py:250``): the converter knows DFlash only;
- ``transformer_layer_config`` is the source config's keys as they are (the converter passes them
  through transformers' ``Qwen3Config(...).to_diff_dict()``, which speculators applies again at load).

The tensors are the draft body only, exactly ``build safetensors-drafter``'s: speculators saves no
``embed_tokens``, ``lm_head``, ``verifier_lm_head`` or ``verifier_norm`` for a full-vocabulary draft
(``_keys_to_ignore_on_save``, ``core.py:54-57``, ``:157-160``) and reloads them from the verifier by name.
That is also why the verifier's *commit* lives in the manifest (``pins.targets``) and the card, not in
the config: ``VerifierConfig`` has no revision field, and ``load_model_layers`` fetches the verifier
with ``hf_hub_download(repo_id=name_or_path, filename=...)`` at its default branch
(``speculators/utils/loading.py:170``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hubrelease.builders.safetensors_drafter import (
    BuiltFile,
    Cast,
    checked_tensors,
    load_checked,
    normalised_config,
    write_weights,
)
from hubrelease.errors import BuildError, InputError
from hubrelease.formats.dflash import DrafterConfig
from hubrelease.fsutil import atomic_write_text
from hubrelease.lint.drafter_config import DFLASH2_KEYS
from hubrelease.lint.target import TargetFacts, facts_from_config, target_findings
from hubrelease.progress import NULL_PROGRESS, Progress
from hubrelease.revisions import is_commit

SPECULATORS_VERSION = "0.9.0"
"""The speculators release whose config this is (``speculators_version``)."""
_NON_TRANSFORMER_KEYS = frozenset(
    {"architectures", "auto_map", "block_size", "dflash_config", "num_target_layers"}
)
"""Source keys that are not the draft decoder's (converter.py:31-33)."""


@dataclass(frozen=True)
class Verifier:
    """The target a speculator is for: its Hub id and commit, and what its config.json says."""

    repo_id: str
    commit: str
    architectures: tuple[str, ...]
    facts: TargetFacts

    @classmethod
    def from_config(cls, spec: str, config: dict[str, Any], source: str) -> Verifier:
        """``spec`` is ``REPO@COMMIT`` (a 40-hex commit: a branch is no pin); ``config`` its config.json."""
        repo_id, _, commit = spec.partition("@")
        if repo_id.count("/") != 1 or not is_commit(commit):
            raise InputError(f"--verifier must be ORG/NAME@<40-hex commit>, got {spec!r}", field="verifier")
        archs = config.get("architectures")
        if not (isinstance(archs, list) and archs and all(isinstance(a, str) for a in archs)):
            raise InputError("the verifier's config.json has no architectures", path=source)
        return cls(repo_id, commit, tuple(archs), facts_from_config(config, source))


def speculators_config(
    config: DrafterConfig, normalised: dict[str, Any], verifier: Verifier
) -> dict[str, Any]:
    """The speculators ``config.json`` of a drafter whose (normalised) z-lab config is ``normalised``."""
    kind = "dflash2" if config.dflash2 else "dflash"
    block = config.block_size
    assert block is not None  # check_config refuses a config without one
    data: dict[str, Any] = {
        "architectures": ["DFlash2DraftModel" if config.dflash2 else "DFlashDraftModel"],
        "speculators_model_type": kind,
        "speculators_version": SPECULATORS_VERSION,
        "transformer_layer_config": {k: v for k, v in normalised.items() if k not in _NON_TRANSFORMER_KEYS},
        "draft_vocab_size": normalised.get("vocab_size"),
        "block_size": block,
        # z-lab reads hidden_states[id + 1] (index 0 is the embeddings); speculators names that layer
        # id + 1 directly (converter.py:117-126).
        "aux_hidden_state_layer_ids": [i + 1 for i in config.target_layer_ids],
        "mask_token_id": config.mask_token_id,
        "sample_from_anchor": False,
        "sliding_window_non_causal": config.dflash2,
        "speculators_config": {
            "algorithm": kind,
            "proposal_methods": [
                # GreedyTokenProposalConfig's defaults (proposals/greedy.py); the anchor is the bonus token.
                {
                    "proposal_type": "greedy",
                    "speculative_tokens": block - 1,
                    "verifier_accept_k": 1,
                    "accept_tolerance": 0.0,
                }
            ],
            "default_proposal_method": "greedy",
            "verifier": {"name_or_path": verifier.repo_id, "architectures": list(verifier.architectures)},
        },
        "tie_word_embeddings": False,
    }
    if config.dflash2:
        data |= {key: config.get(key) for key in DFLASH2_KEYS}
    if normalised.get("torch_dtype"):
        data["dtype"] = normalised["torch_dtype"]
    return data


def build_speculators_drafter(
    source: Path,
    out: Path,
    verifier: Verifier,
    *,
    cast: Cast = "bf16",
    max_shard_size: int | None = None,
    progress: Progress = NULL_PROGRESS,
) -> list[BuiltFile]:
    """Write ``out/config.json`` (speculators format) and the draft body's safetensors."""
    config = load_checked(source, out)
    if config.hidden_size != verifier.facts.hidden:
        # converter.py:101-108 refuses the same ("Architecture mismatch").
        raise BuildError(
            f"hidden_size {config.hidden_size} != the verifier's {verifier.facts.hidden} "
            f"({verifier.facts.source}): speculators feeds the verifier's hidden states to fc",
            path=config.path,
            field="hidden_size",
        )
    fc = config.hidden_size * len(config.target_layer_ids)
    problems = target_findings(
        verifier.facts,
        config.target_layer_ids,
        fc,
        config.mask_token_id,
        None,
        declared_depth=config.raw.get("num_target_layers"),
    )
    if problems:
        raise BuildError(problems[0].message, path=config.path, field="dflash_config.target_layer_ids")
    tensors = checked_tensors(config, source)
    written = write_weights(tensors, out, cast, max_shard_size, progress)
    document = speculators_config(config, normalised_config(config, cast), verifier)
    atomic_write_text(out / "config.json", json.dumps(document, indent=2, sort_keys=True) + "\n")
    return [BuiltFile.of(p) for p in [*written, out / "config.json"]]
