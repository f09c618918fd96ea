"""The committed seed cards are current, and carry the seeds' facts and numbers (../shared/seeds/).

The committed README.md files are the goldens: ``HUBRELEASE_UPDATE_GOLDENS=1`` rewrites them.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from hubrelease.card import check_card
from tests.factories.cli import invoke

SEED_000 = "manifests/ornith-1.5-dflash2/hubrelease.yaml"
SEED_001 = "manifests/ornith-1.0-dflash-gguf/hubrelease.yaml"
EXAMPLE = "manifests/example/hubrelease.yaml"

SEED_000_FACTS = [
    "license: apache-2.0",
    "base_model: z-lab/Qwen3.5-35B-A3B-DFlash",
    "base_model_relation: finetune",
    "| Autoregressive | 1 | 79.3 | 80.7 | 118.0 ms | 12.39 ms | n/a |",
    "| NEXTN | 8 | 172.6 | 26.5 | 536.5 ms | 37.67 ms | 2.01 |",
    "| Qwen3.5 DFlash warm start | 4 | 174.6 | 50.8 | 255.1 ms | 19.69 ms | 3.64 |",
    "| Ornith DFlash2 | 1 | 114.2 | 115.4 | 145.1 ms | 8.67 ms | 4.02 |",
    "| Qwen3.5 DFlash warm start | 8 | 1190.0 | 217.3 | 250.1 ms | 4.60 ms | 3.56 |",
    "| Ornith DFlash2 | 8 | 1351.6 | 244.3 | 237.0 ms | 4.09 ms | 3.97 |",
    "114.2 tok/s against 79.3 tok/s for Autoregressive: +44.0% over Autoregressive at concurrency 1, "
    "with mean accepted length 4.02",
    "Measured with sglang at commit `710267dc4c817b38d9965346390cd56b59b54eda`.",
    "sglang serve \\\n  --trust-remote-code \\\n  --model-path ornith-ai/Ornith-1.5-35B-A3B-NVFP4 \\\n"
    "  --revision 0f0b1b59b879ccde1353e6ebd0fb10c204d4c544 \\\n  --kv-cache-dtype fp8_e4m3 \\\n"
    "  --attention-backend flashinfer \\\n  --moe-runner-backend marlin \\\n  --speculative-algorithm DFLASH \\\n"
    "  --speculative-draft-model-path jzinno/Ornith-1.5-35B-A3B-DFlash2 \\\n"
    "  --speculative-num-draft-tokens 10 \\\n  --speculative-draft-attention-backend flashinfer \\\n"
    "  --mamba-radix-cache-strategy extra_buffer \\\n  --mamba-ssm-dtype float32\n",
    "This release is licensed under Apache-2.0",
    "- Target `ornith-ai/Ornith-1.5-35B-A3B` (MIT).",
    "- Training data derives from `nvidia/Nemotron-Post-Training-Dataset-v2` "
    "(NVIDIA Nemotron Post-Training Dataset v2), under CC-BY-4.0.",
    # Every other number and fact of the seed text, rendered from the files that hold it.
    "100,014,884 generated assistant completion tokens (108,729 conversations), released as "
    "`jzinno/Ornith-1.5-35B-A3B-Nemotron-v2-100M`",
    "hidden layers 1, 6, 11, 16, 22, 27, 32, 37 of the target",
    "captured on 8x NVIDIA H200 141GB HBM3e.",
    "- Trained on 1x NVIDIA H200 141GB HBM3e.",
    "a DFlash2 drafter, 6 draft layers, a 16-token block, a 4096-token sliding window, selector rank 256 and "
    "selector top-k 16, a 2048-wide projection of the target features.",
    "128 anchors; microbatch 1 and effective batch 32; AdamW with learning rate 0.0001 and a "
    "warmup-plus-cosine schedule; 3,228 optimizer steps",
    "40 prompts (10 chat, 10 code, 10 math, 10 stem), greedy sampling, up to 512 output tokens per request.",
    "Hardware: 1x NVIDIA H200 141GB HBM3e.",
    "Hardware: 1x NVIDIA GB10.",
    "held out of training. Held outside the complete training-source reservoir",
    "Serving settings: KV cache fp8_e4m3, attention backend flashinfer, MoE runner marlin.",
    # "Both external drafts propose up to 10 tokens": the seed states no count for NEXTN.
    "Draft tokens per round: up to 10 for Qwen3.5 DFlash warm start and Ornith DFlash2; not stated for NEXTN.",
    "(NVFP4)",
    "| NEXTN | 1 | 281.1 | 304.0 | 101.5 ms | 3.29 ms | 1.93 |",
    "| Autoregressive | 8 | 989.2 | 188.6 | 233.0 ms | 5.30 ms | n/a |",
    "with mean accepted length 4.02 at concurrency 1.",
    "not expected to be a strong speculative baseline",
    "they are not general quality or speed claims",
    "Machine-readable results: `spark-evaluation.json`.",
    "Machine-readable results: `h200-evaluation.json`.",
    "- Initialized from `z-lab/Qwen3.5-35B-A3B-DFlash` (Apache-2.0).",
    "- DFlash 2: Keep Drafting Parallel\n- DFlash: Block Diffusion for Flash Speculative Decoding\n"
    "- NeMo AutoModel speculative-drafting implementation",
    # The publisher's prose, in pinned card/*.md sections: what the seed says that no data file holds.
    "each grouped causal convolution begins as a unit tap on its own position with zero weight on predecessors",
    "the path selector's successor codebook begins at zero",
    "each working through its own contiguous share of the data",
    "Training therefore never held the whole teacher in memory",
    "Serve it with an SGLang build that supports DFlash2",
    "Choose memory limits, context length and concurrency for the hardware you deploy on",
    # The rest of the seed, statement by statement (qualifiers included).
    "A compatible Ornith target checkpoint must be loaded with it at inference time.",
    "it loaded only Ornith's frozen embedding and language-model head",
    "The four configurations are matched: autoregressive decoding (the target alone), the target's built-in NEXTN "
    "head, the unadapted Qwen3.5 DFlash warm start, and this Ornith-adapted DFlash2 drafter.",
    "The target is the official Ornith NVFP4 checkpoint. The revision shown is the one the publisher's serving "
    "command names; the evaluation text itself names no revision.",
]

SEED_001_FACTS = [
    "---\npipeline_tag: text-generation\nlibrary_name: gguf\nbase_model: z-lab/Qwen3.5-397B-A17B-DFlash\n"
    "base_model_relation: finetune\nlicense: apache-2.0\ninference: false\ntags:\n- dflash\n"
    "- speculative-decoding\n- speculative-decoding-draft\n- draft-model\n- block-diffusion\n- gguf\n"
    "- ik_llama.cpp\n- qwen3.5\n- ornith\n- iq2_ks\n- moe\n---\n",
    "llama-server \\\n  --model Ornith-1.0-397B-A17B-IQ2_KS-00001-of-00005.gguf \\\n"
    "  --model-draft Ornith-DFLASH-m1-q4.gguf \\\n  --spec-type dflash:n_max=3,cross_ctx=512 \\\n"
    "  --n-gpu-layers 99 --n-gpu-layers-draft 99 \\\n  --draft-params '-wgt 17' -wgt 8 \\\n"
    "  --flash-attn on --parallel 1\n",
    "| `Ornith-DFLASH-m1-q4.gguf` | 737 MB | recommended |",
    "| `Ornith-DFLASH-m1-q8_0.gguf` | 1.38 GB | variant |",
    "| `Ornith-DFLASH-m1-f16.gguf` | 2.59 GB | variant |",
    "26 F32, 24 Q8_0, 12 IQ3_KS, 7 IQ4_KSS. IQ3_KS and IQ4_KSS are types only ik_llama.cpp loads",
    "7b9f2654dfc07c0a9197da3e6414db58202a60008a24f76387a52136f302134a  bench/Ornith-DFLASH-rt-f16-rope1e7.gguf\n",
    "c2d623da10ee1008a311ccd3806c4501cbe02eec9075fb44cce4819dc13c1934  Ornith-DFLASH-m1-q4.gguf\n",
    "8b6bee4dc82ca1c89a782212144495e3b874465995dad8e781562d75f452f5de  Ornith-DFLASH-m1-q8_0.gguf\n",
    "186b73dce2046b072a67361ddb8f09992761eed0171f2cfbb1d251fb8f943d6e  Ornith-DFLASH-m1-f16.gguf\n",
    "| A, upstream | `bench/Ornith-DFLASH-rt-f16-rope1e7.gguf` | 7b9f2654dfc07c0a |",
    "| B, retrained | `Ornith-DFLASH-m1-f16.gguf` | 186b73dce2046b07 |",
    "| 0 | 18.03 | 18.06 | +0.039 | 0.072 | [-0.021, 0.099] | 8 | secondary |",
    "| 2 | 20.75 | 21.46 | +0.714 | 0.892 | [-0.032, 1.460] | 8 | secondary |",
    "| 3 | 21.63 | 22.94 | +1.315 | 1.142 | [0.360, 2.270] | 8 | **primary** |",
    "| 4 | 21.26 | 22.95 | +1.686 | 1.549 | [0.391, 2.981] | 8 | secondary |",
    "+1.315 output tok/s, +6.1%, 95% CI [0.360, 2.270] (+1.7% to +10.5%)",
    "last boot minus first -0.093",
    "last boot minus first +0.403",
    "| tok/s | 18.71 | 21.26 | 24.62 | 25.65 | 25.23 | 24.24 | 21.04 | 19.83 | 18.72 |",
    "| ± | 0.23 | 0.46 | 1.23 | 1.61 | 2.40 | 2.63 | 3.49 | 3.79 | 3.50 |",
    "| output tokens per round | n/a | 1.87 | 2.56 | 3.06 | 3.39 | 3.96 | 4.42 | 4.82 | 4.89 |",
    "fits approximately 90.9 + 14.7 x (n_max - 1) ms over n_max = 1 to 12 (7 settings; the fit as its source states "
    "it). "
    "Measured minus fit, in ms: -2.9 at 1, -1.7 at 2, -1.0 at 3, -0.7 at 4, -1.1 at 6, +16.3 at 8, -9.9 at 12, "
    "-36.6 at 15.",
    # The seed: "25.65 tokens per second against 18.71": the headline carries its unit.
    "with `Ornith-DFLASH-m1-q4.gguf`, n_max=3 measured "
    "25.65 output tok/s against 18.71 output tok/s for n_max=0, a 37.0% increase (paired difference "
    "+6.93 output tok/s, 95% CI [5.55, 8.32]",
    "positive in 8 of 8 pairs, per-pair +20.8% to +52.5%",
    "| 25.23 | 25.65 | +0.414 | n/a | [-0.568, 1.395] |",
    "at commit `f96eaddba8bed6a9a5e628bbf6a566775c70b49c` plus local patches across 21 files (+1967 / -279 lines)",
    "7b7ff16cd57264905bf3b37334a29856189eb004f0cbb0b3c3cc4d04c951a576  llama-server\n",
    "3f160b1f9dc7df27142da9a0d0e1345a7cf143557f526d77a75c1e79c5e3b305  libmtmd.so\n",
    "`Ornith-1.0-397B-A17B-IQ2_KS-00001-of-00005.gguf`, 19,982,543,552 bytes",
    "`Ornith-1.0-397B-A17B-IQ2_KS-00005-of-00005.gguf`, 18,176,416,800 bytes",
    "80d58268f8839a22cad42516cc95d127b79fca194d25ee7a8cc4d610bc8f560e  dflash.py\n",
    "This release is licensed under Apache-2.0.\n",
    "- Apache-2.0, inherited from the upstream drafter z-lab/Qwen3.5-397B-A17B-DFlash",
    "Target `deepreinforce-ai/Ornith-1.0-397B`, itself derived from `Qwen/Qwen3.5-397B-A17B`.",
    "Not affiliated with Z-Lab, Modal, SGLang, Qwen, or deepreinforce-ai.",
    # The arms' shared metadata, sampling, the config's top-level rope_theta, precision as written.
    "rope.freq_base = 1e7, attention.sliding_window = 4096, sliding_window_pattern = TTTTTF",
    "the config also carries `rope_theta: 10000000.0` at the top level, in addition to the nested block",
    "temperature = 0, seed = 42",
    "up to 256 output tokens per request",
    # Not preregistered: the headline comparison carries no "secondary" (nor any) endpoint role.
    "| n_max=3 vs n_max=0 | 18.71 | 25.65 | +6.93 | n/a | [5.55, 8.32] | 8 |\n",
    # Each request sets its own n_max (the A/B at 0, 2, 3, 4, the sweep to 15) under a high startup N_MAX.
    "Serving settings: n_max set per request (0, 1, 2, 3, 4, 6, 8, 12, 15) as each table below states it, "
    "temperature = 0,",
    "p = 0.0139",
    # The seed dates Measurement 2 only: the date stands beside its tables, not above the A/B.
    "Measured 2026-08-09. Drafter `Ornith-DFLASH-m1-q4.gguf`; 1 server boot",
    "| c2d623da10ee1008 |\n\nMeasured 2026-08-09.\n\nTreatment n_max=3 minus baseline n_max=0",
    "- Measurement 2: n_max set per request within the one boot; each cell is 8 prompts times 2 repetitions.",
    "- From Measurement 2's single server boot, paired by prompt over the 8 prompts.",
    "plus local patches (bench/engine-local-patches.diff: 21 files, +1967 / -279 lines)",
    "ik_llama.cpp build of 2026-08-05, with -DGGML_CUDA=ON, CMAKE_CUDA_ARCHITECTURES=native (sm_121 on GB10), "
    "-march=armv8.2-a+dotprod+i8mm+fp16",
    "`bench/results-retrain-ab-20260809.csv` | n/a | data | Measurement 1 raw rows, 256 |",
    "`bench/results-m1q4-20260809.csv` | n/a | data | Measurement 2 raw rows, 144 |",
    "the local engine changes, 3301 lines",
    "Design: boots in the order A, B, B, A; 8 prompts, 2 repetitions per cell per boot, 256 predicted tokens.",
    "Drafter `Ornith-DFLASH-m1-q4.gguf`; 1 server boot; 16 runs per cell",
    "w_k = exp(-(k-1)/gamma)",
    "self-attested",
    "This A/B does not cover the shipped quantization.",
    "a DFlash drafter, 6 draft layers, a 16-token block",
    "Trained on 1x NVIDIA GB10.",
    "not pinned to a commit; pinned by the sizes of 5 files.",
    "`Ornith-1.0-397B-A17B-IQ2_KS-00002-of-00005.gguf`, 19,806,331,648 bytes",
    "`Ornith-1.0-397B-A17B-IQ2_KS-00004-of-00005.gguf`, 19,994,372,480 bytes",
    "6ab80960540e043ebd8001162ab3401cb267a61a53b513ce13ebb1cd2fc1c089  libllama.so\n",
    "1e7e686140afdd4069956414238a8e674d04136492967ba1b2cfde635cdcebca  libggml.so\n",
    "Measured with ik_llama.cpp at commit `f96eaddba8bed6a9a5e628bbf6a566775c70b49c` plus local patches",
    # The publisher's prose, in pinned card/*.md sections.
    "its endpoint, design and analysis were written down before any of its data was collected",
    "it was already this artifact's operating point before the A/B",
    "Boots were counterbalanced as A, B, B, A",
    "The drafter can only be chosen when the server starts, so the two arms cannot be compared inside one boot",
    "On even repetitions the configurations ran in reverse order",
    "engine-relevant metadata is byte-identical",
    "the gap is an observation, not something the quantization is shown to cause",
    'each request sets `"speculative.n_max": K`',
    "The engine binaries are dynamically linked",
    "The target repository can change and its Hub revision was not recorded",
    "Measurement 2 has not been re-run through it to confirm they are equivalent",
    "`bench.py` appends to its output file",
    # The rest of the seed, statement by statement (qualifiers included).
    "n = 8, across 4 boots and conditional on them, the preregistered primary endpoint",
    "With two boots per arm the boot-to-boot component cannot be estimated properly",
    "at n_max=3 both are small next to the +1.315 effect",
    "so none of the A/B's cross-session caveats apply to this comparison",
    "The base commit alone does not build the measured binary",
    "Every result row carries run and configuration identifiers.",
    "cannot amortize expert weight traffic as it amortizes the dense remainder",
    "treat that as a hypothesis consistent with the curve",
    "follows the interior closely and fails at both ends",
]


@pytest.mark.parametrize("manifest", [SEED_000, SEED_001, EXAMPLE])
def test_committed_card_is_current(
    manifest: str, repo_root: Path, golden: Callable[[Path, str], None]
) -> None:
    result = check_card(repo_root / manifest)
    golden(result.path, result.expected)
    assert result.current


@pytest.mark.parametrize(("manifest", "facts"), [(SEED_000, SEED_000_FACTS), (SEED_001, SEED_001_FACTS)])
def test_seed_card_carries_the_seed_facts(manifest: str, facts: list[str], repo_root: Path) -> None:
    text = check_card(repo_root / manifest).expected
    missing = [fact for fact in facts if fact not in text]
    assert not missing


def test_ci_gate_passes_on_the_committed_cards(repo_root: Path) -> None:
    for manifest in (SEED_000, SEED_001, EXAMPLE):
        result = invoke(["render-card", str(repo_root / manifest), "--check"])
        assert result.exit_code == 0, result.output
        assert result.output.strip().endswith("README.md: current")


@pytest.mark.parametrize("manifest", [SEED_000, SEED_001])
def test_the_introduction_is_said_once(manifest: str, repo_root: Path) -> None:
    text = check_card(repo_root / manifest).expected
    assert text.count("not a standalone language model") == 1
    assert "p = 0.0000" not in text


@pytest.mark.parametrize("manifest", [SEED_000, SEED_001])
def test_the_seed_cards_claim_no_more_than_their_seed(manifest: str, repo_root: Path) -> None:
    """Seed 000 says "training-source reservoir" and states no library; each table names its source lines."""
    text = check_card(repo_root / manifest).expected
    assert "held out of all training data" not in text
    assert "library_name: sglang" not in text
    assert "Transcribed from seed 00" in text and ", lines " in text
    assert "inherited from the drafter" not in text  # the seeds state the licence, not that it is inherited
    assert "the licence of the drafter it was initialized from" not in text  # an inference from equal ids
    # Statements no seed makes: a definition of accepted length, a fit method, roles and dates it does not give.
    assert "including the target's own token" not in text
    assert "least squares" not in text
    assert "exploratory |" not in text and "server default" not in text
    assert "Measured 2026-08-09. Engine" not in text
    assert "no tokenizer files are needed" not in text
    assert "NVFP4` (MIT)" not in text  # seed 000 calls the Ornith target MIT, not its NVFP4 quantization
    # Their evaluations are transcriptions: only the .eval_results bytes are rebuilt, no figure from raw runs.
    assert "## Reproducibility" in text and "recomputes every figure" not in text


def test_seed_000_names_what_its_seed_names(repo_root: Path) -> None:
    """The drafter is for the BF16 repo, trained on the released generations; its precision is not stated."""
    text = check_card(repo_root / SEED_000).expected
    assert "speculative decoding with `ornith-ai/Ornith-1.5-35B-A3B`. It is not" in text
    front = text.split("---")[1]
    assert (
        "datasets:\n- jzinno/Ornith-1.5-35B-A3B-Nemotron-v2-100M\n- nvidia/Nemotron-Post-Training-Dataset-v2"
        in front
    )
    assert "DFlash2 drafter weights (BF16)" not in text
