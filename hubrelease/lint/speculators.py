"""Rules for a speculators-format DFlash drafter's own fields (what vLLM and speculators read).

The draft body's rules are the z-lab ones, run on ``formats.speculators.zlab_view``; these are the
fields only a speculators config has, each a check speculators or vLLM would fail or silently misread.
"""

from __future__ import annotations

from typing import Any

from hubrelease.formats.speculators import TYPES
from hubrelease.lint.findings import RuleFinding, error, warning
from hubrelease.manifest.models import is_repo_id

RULE = "speculators"


def speculators_findings(config: dict[str, Any]) -> list[RuleFinding]:
    kind = config.get("speculators_model_type")
    if kind not in TYPES:
        return [
            error(RULE, f"speculators_model_type {kind!r} is not a DFlash speculator ({', '.join(TYPES)})")
        ]
    findings: list[RuleFinding] = []
    spec = config.get("speculators_config")
    if not isinstance(spec, dict):
        return [error(RULE, "speculators_config is missing: speculators and vLLM read the verifier from it")]
    if spec.get("algorithm") != kind:
        findings.append(
            error(RULE, f"speculators_config.algorithm is {spec.get('algorithm')!r}, the model type {kind!r}")
        )
    methods = spec.get("proposal_methods")
    types = (
        [m.get("proposal_type") for m in methods if isinstance(m, dict)] if isinstance(methods, list) else []
    )
    if not types:
        findings.append(error(RULE, "speculators_config.proposal_methods is empty"))
    elif spec.get("default_proposal_method") not in types:
        # SpeculatorsConfig.check_default_proposal_method (speculators/config.py) refuses it.
        findings.append(
            error(
                RULE, f"default_proposal_method {spec.get('default_proposal_method')!r} is not one of {types}"
            )
        )
    block = config.get("block_size")
    anchor = bool(config.get("sample_from_anchor"))
    for method in methods if isinstance(methods, list) else []:
        tokens = method.get("speculative_tokens") if isinstance(method, dict) else None
        want = block if anchor else block - 1 if isinstance(block, int) else None
        if method.get("proposal_type") == "greedy" and want is not None and tokens != want:
            # models/dflash/core.py: block_size tokens from the anchor, else block_size - 1.
            findings.append(
                warning(RULE, f"greedy speculative_tokens is {tokens!r}; a block of {block} drafts {want}")
            )
    findings += _verifier(spec.get("verifier"))
    aux = config.get("aux_hidden_state_layer_ids")
    if not (
        isinstance(aux, list) and aux and all(isinstance(i, int) and not isinstance(i, bool) for i in aux)
    ):
        findings.append(
            error("target-layers", "aux_hidden_state_layer_ids must be a non-empty list of layer ids")
        )
    elif min(aux) < 1:
        findings.append(
            error(
                "target-layers",
                f"aux_hidden_state_layer_ids {aux} has {min(aux)}: speculators ids are z-lab ids + 1 (0 would be "
                "the embeddings)",
            )
        )
    layer = config.get("transformer_layer_config")
    vocab = layer.get("vocab_size") if isinstance(layer, dict) else None
    if config.get("draft_vocab_size") != vocab:
        # A reduced draft vocabulary needs t2d / d2t and a saved lm_head (model.py _init_vocab);
        # DFlash2DraftModel refuses it outright (models/dflash2/core.py).
        message = f"draft_vocab_size {config.get('draft_vocab_size')!r} != vocab_size {vocab!r}"
        findings.append(error(RULE, f"{message}: DFlash2 needs the full vocabulary") if kind == "dflash2" else
                        warning(RULE, f"{message}: a reduced vocabulary (t2d / d2t) is not checked"))  # fmt: skip
    return findings


def _verifier(verifier: object) -> list[RuleFinding]:
    if not isinstance(verifier, dict):
        return [error(RULE, "speculators_config.verifier is missing")]
    name, archs = verifier.get("name_or_path"), verifier.get("architectures")
    findings = []
    if not isinstance(name, str) or not is_repo_id(name):
        # load_model_layers fetches it by name (utils/loading.py:170): a converter run against a local
        # folder writes that machine's path, which nobody else can resolve.
        findings.append(
            error(RULE, f"verifier.name_or_path {name!r} is not a Hub repo id: users cannot fetch it")
        )
    if not (isinstance(archs, list) and archs):
        findings.append(
            error(RULE, "verifier.architectures is empty (speculators' VerifierConfig requires it)")
        )
    return findings
