"""The evaluation JSON (schema_version 1) as pydantic models: what a benchmark run measured.

One file holds one run: the machine, engine, target and prompt set it was measured on, the serving
matrix (``cells``, one per configuration x concurrency), and optional paired comparisons and
parameter sweeps. Every number is computed from raw benchmark output by ``hubrelease build eval``
(or transcribed from a published table, which ``provenance`` then says). Field docstrings become the
descriptions in ``hubrelease schema --eval``; card templates read these field names, so keep them stable.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    model_serializer,
    model_validator,
)

# The machine and digest types are the manifest's own, so an evaluation's hardware matches pins.hardware.
from hubrelease.manifest.models import Hardware as Hardware
from hubrelease.manifest.models import Sha256
from hubrelease.revisions import is_commit

SCHEMA_VERSION = 1

"""A full git commit id (40 lowercase hex), as the Hub reports revisions."""


def _commit(value: str) -> str:
    if not is_commit(value):
        raise ValueError(f"{value!r} is not a 40-hex commit")
    return value


CommitSha = Annotated[str, AfterValidator(_commit)]
"""A full git commit id, 40 lowercase hex characters."""


def _digest_prefix(value: str) -> str:
    if not re.fullmatch(r"[0-9a-f]{8,64}", value):
        raise ValueError(f"{value!r} is not a sha256 or a prefix of one (8 to 64 lowercase hex characters)")
    return value


DigestPrefix = Annotated[str, AfterValidator(_digest_prefix)]
"""A SHA-256 digest or its first characters (8 to 64 lowercase hex), as benchmark rows record it."""
NonNegative = Annotated[float, Field(ge=0, allow_inf_nan=False)]
"""A finite measurement that cannot be negative (throughput, latency)."""
Finite = Annotated[float, Field(allow_inf_nan=False)]
"""A finite number that may be negative (a difference)."""
Setting = int | float | str
"""The value of a swept or compared setting, e.g. n_max = 3."""
EvaluationRole = Literal["primary", "secondary", "exploratory"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Engine(_Strict):
    """The serving engine, pinned to the source commit the binary was built from."""

    name: str
    """Engine name (sglang, ik_llama.cpp, llama.cpp, vllm...)."""
    commit: CommitSha | None = None
    """Base commit of the engine source; null when it was not recorded."""
    repository: str | None = None
    """Source repository (URL or owner/name)."""
    version: str | None = None
    """Release version, when the engine has one."""
    local_patches: str | None = None
    """Description or path of local changes on top of ``commit`` (null: unpatched)."""
    binaries: list[DigestPrefix] = Field(default_factory=list)
    """SHA-256 digests (or the prefixes the rows carry, e.g. seed 001's server_sha16) of the server
    binaries that produced the numbers; each must be one of the manifest's ``pins.engines[].binaries``."""


class Target(_Strict):
    """The target model every drafted token is verified against."""

    repo_id: str
    """Hub id of the target (e.g. ornith-ai/Ornith-1.5-35B-A3B-NVFP4)."""
    revision: CommitSha | None = None
    """Hub commit of the target; null when it was not recorded (then say how it is pinned in ``note``)."""
    quantization: str | None = None
    """Quantization of the target weights (e.g. NVFP4, IQ2_KS)."""
    name: str | None = None
    """Display name."""
    note: str | None = None
    """Caveat about the pin (e.g. pinned by shard sizes only)."""


class Drafter(_Strict):
    """A draft model (or built-in draft head) proposing tokens to the target."""

    name: str
    """Display name (e.g. Ornith DFlash2)."""
    repo_id: str | None = None
    """Hub id, when the drafter is published."""
    revision: CommitSha | None = None
    """Hub commit of the drafter repo."""
    file: str | None = None
    """File name, for single-file drafters (GGUF)."""
    sha256: Sha256 | None = None
    """SHA-256 of ``file``."""
    sha256_prefix: DigestPrefix | None = None
    """First characters of the SHA-256, when the source recorded only a prefix (seed 001's drafter_sha16)."""
    quantization: str | None = None
    """Weight type of the drafter file (FP16, Q8_0, mixed...)."""


class ServingSettings(_Strict):
    """Server and request settings shared by every cell of the run."""

    kv_cache_dtype: str | None = None
    """KV cache dtype (e.g. fp8_e4m3)."""
    attention_backend: str | None = None
    """Attention kernel backend (e.g. flashinfer)."""
    moe_runner_backend: str | None = None
    """MoE kernel backend (e.g. marlin)."""
    draft_tokens: int | None = Field(default=None, ge=0)
    """Maximum tokens a drafter proposes per round (SGLang --speculative-num-draft-tokens, llama n_max)."""
    sampling: str | None = None
    """Sampling mode (e.g. greedy)."""
    temperature: float | None = Field(default=None, ge=0)
    """Sampling temperature."""
    seed: int | None = None
    """Sampling seed."""
    max_output_tokens: int | None = Field(default=None, ge=1)
    """Output-token cap per request."""
    parallel_slots: int | None = Field(default=None, ge=1)
    """Server slots (llama-server --parallel)."""
    extra: dict[str, str | int | float | bool] = Field(default_factory=dict)
    """Further flags that matter for reproducing the run, by flag name."""


class PromptSet(_Strict):
    """The prompts sent, identified by content digest so a rerun can prove it used the same ones."""

    name: str
    """Name of the prompt set."""
    total: int | None = Field(default=None, ge=1)
    """Number of prompts sent; null when the runs do not say (bench_serving without --output-details)."""
    categories: dict[str, int] = Field(default_factory=dict)
    """Prompts per category (e.g. chat/code/math/stem); sums to ``total`` when given."""
    sha256: Sha256 | None = None
    """SHA-256 of the prompts file; null when the file is not published."""
    path: str | None = None
    """Where the prompts file is published, relative to the release."""
    held_out: bool | None = None
    """True when the prompts were kept out of training; ``description`` says out of what (e.g. the
    training-source reservoir), since the card prints only "held out of training" for it."""
    description: str | None = None
    """What the prompts cover."""

    @model_validator(mode="after")
    def _check_counts(self) -> PromptSet:
        if self.categories and self.total is not None and sum(self.categories.values()) != self.total:
            raise ValueError(f"categories sum to {sum(self.categories.values())}, total is {self.total}")
        return self


class SourceFile(_Strict):
    """A raw benchmark file the numbers were computed from."""

    path: str
    """Path as given to ``hubrelease build eval`` (relative where possible)."""
    sha256: Sha256
    """SHA-256 of the file."""
    records: int = Field(ge=0)
    """Records (JSONL lines or CSV rows) read from it."""


class TableLines(_Strict):
    """Where one transcribed table (or paragraph of figures) sits in its document."""

    title: str
    """The table's heading in the document (e.g. NVIDIA H200, Measurement 1)."""
    lines: tuple[int, int]
    """First and last line of the table, 1-based and inclusive."""

    @model_validator(mode="after")
    def _check_range(self) -> TableLines:
        first, last = self.lines
        if not 1 <= first <= last:
            raise ValueError(f"lines [{first}, {last}] is not a range of 1-based line numbers, first <= last")
        return self


class SourceDocument(_Strict):
    """A document the numbers were transcribed from: which bytes, and which lines hold each table.

    ``verify`` checks ``sha256`` against the release's pin of the same file (an artifact at ``path``, an
    external file of that name, or the file at ``url``'s path in a pinned repo) when there is one.
    """

    name: str
    """What the document is (e.g. the published model card of ORG/NAME)."""
    path: str | None = None
    """Where it is, relative to the release folder."""
    url: str | None = None
    """Where it is published (https://huggingface.co/ORG/NAME/blob/REVISION/PATH for a Hub file)."""
    sha256: Sha256
    """SHA-256 of the document's bytes."""
    tables: list[TableLines] = Field(default_factory=list)
    """Each transcribed table and its line range."""

    @model_validator(mode="after")
    def _check_where(self) -> SourceDocument:
        if self.path is None and self.url is None:
            raise ValueError("a source document needs a path (relative to the release) or a url")
        if self.path is not None and (
            self.path.startswith(("/", "~")) or re.match(r"^[A-Za-z]:[\\/]", self.path)
        ):
            raise ValueError(f"path {self.path!r} is absolute: give it relative to the release folder")
        return self


class Provenance(_Strict):
    """How the numbers in this file came to be."""

    generator: str
    """Tool and version that wrote the file (e.g. hubrelease 0.1.0 build eval)."""
    sources: list[SourceFile] = Field(default_factory=list)
    """Raw inputs, with digests."""
    transcribed_from: str | None = None
    """Set when the numbers were copied from a published table rather than computed from raw runs."""
    documents: list[SourceDocument] = Field(default_factory=list)
    """The documents a transcription copied from, each with its sha256 and the line range of each table."""

    @model_serializer(mode="wrap")
    def _omit_no_documents(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """An evaluation built from raw runs names no document: leaving the empty list out keeps the
        bytes of files built before documents existed, so their ``rebuild --check`` stays identical."""
        data: dict[str, Any] = handler(self)
        if not self.documents:
            data.pop("documents", None)
        return data

    warnings: list[str] = Field(default_factory=list)
    """What the build could not check or had to assume (e.g. accept length not per run), as printed by it."""


class Run(_Strict):
    """What was measured on what: the metadata shared by every number in the file."""

    hardware: Hardware
    """Machine."""
    engine: Engine
    """Serving engine."""
    target: Target
    """Target model."""
    drafter: Drafter | None = None
    """The drafter this evaluation is about (configurations may name others)."""
    serving: ServingSettings = Field(default_factory=ServingSettings)
    """Server and request settings."""
    prompt_set: PromptSet
    """Prompts sent."""
    date: str | None = None
    """Measurement date (ISO 8601)."""


class Configuration(_Strict):
    """One serving configuration of the matrix (a row group in the card's table)."""

    id: str
    """Stable identifier used by cells (e.g. autoregressive, nextn, dflash-warm-start, dflash2)."""
    label: str
    """Display name (e.g. Qwen3.5 DFlash warm start)."""
    method: str
    """Decoding method: autoregressive, mtp, dflash, dflash2, eagle3..."""
    drafter: Drafter | None = None
    """Drafter used (null for autoregressive or a head built into the target)."""
    draft_tokens: int | None = Field(default=None, ge=0)
    """Draft tokens per round, when it differs from the run's serving setting."""


def _absent(value: object) -> bool:
    """Fields added after files were published are left out of the JSON when unset, so a build
    without categories writes the same bytes as before they existed."""
    return value is None or value == []


class Percentiles(_Strict):
    """Summary statistics of one latency metric over a run, ms, as the benchmark tool reported them."""

    mean: NonNegative | None = None
    """Mean."""
    median: NonNegative | None = None
    """Median."""
    p99: NonNegative | None = None
    """99th percentile."""


class LatencySummary(_Strict):
    """bench_serving's own summary figures (``{mean,median,p99}_{ttft,tpot,itl,e2e_latency}_ms``)."""

    ttft: Percentiles | None = None
    """Time to first token."""
    tpot: Percentiles | None = None
    """Time per output token after the first, per request: (latency - TTFT) / (output tokens - 1)."""
    itl: Percentiles | None = None
    """Inter-token latency, pooled over streamed chunks (not comparable across speculative servers)."""
    e2e_latency: Percentiles | None = None
    """End-to-end request latency."""


class Cell(_Strict):
    """One configuration at one concurrency: the serving metrics of one benchmark run."""

    configuration: str
    """Id of the configuration."""
    concurrency: int = Field(ge=1)
    """Maximum requests in flight (bench_serving --max-concurrency)."""
    overall_tok_s: NonNegative
    """Output tokens per second over all requests (total output tokens / duration)."""
    per_user_tok_s: NonNegative
    """1000 / median_tpot_ms: the decode speed one user sees at the median TPOT (seed 000: 80.7 = 1000 / 12.39)."""
    median_ttft_ms: NonNegative
    """Median time to first token, ms (bench_serving's median_ttft_ms)."""
    median_tpot_ms: NonNegative
    """Median over requests of (latency - TTFT) / (output tokens - 1), ms (bench_serving's median_tpot_ms)."""
    accepted_length: NonNegative | None = None
    """Mean tokens per verify round, including the target's bonus token; null without speculation."""
    accepted_length_per_run: bool | None = None
    """True when the server's counters were reset before the run (bench_serving --flush-cache), so
    accepted_length covers this run only; false when it is a server-lifetime average; null when unknown."""
    failed_requests: int | None = Field(default=None, ge=0)
    """Requests that returned an error (left out of every figure); null when the source cannot count them
    (bench_serving without --output-details): unknown, not zero."""
    server_info: bool | None = None
    """True when the run's server said what it ran (bench_serving's server_info) and that was checked
    against the configuration; false when the run carries no such account; null when not recorded."""
    latency_ms: LatencySummary | None = None
    """The benchmark tool's own latency summary for the run, ms."""
    request_count: int | None = Field(default=None, ge=1)
    """Completed requests; null when the source table does not state it."""
    duration_s: NonNegative | None = None
    """Wall-clock duration of the run, s."""
    total_output_tokens: int | None = Field(default=None, ge=0)
    """Output tokens produced in the run."""


class Interval(_Strict):
    """A two-sided confidence interval."""

    low: Finite
    """Lower bound."""
    high: Finite
    """Upper bound."""
    level: float = Field(default=0.95, gt=0, lt=1)
    """Confidence level."""

    @model_validator(mode="after")
    def _check_order(self) -> Interval:
        if self.low > self.high:
            raise ValueError(f"low {self.low} is above high {self.high}")
        return self


class Range(_Strict):
    """Smallest and largest observed value (not an interval estimate)."""

    low: Finite
    """Smallest value."""
    high: Finite
    """Largest value."""


class PositionAcceptance(_Strict):
    """Draft tokens proposed and accepted at one position of the draft (1: the first drafted token)."""

    position: int = Field(ge=1)
    """Position in the draft, from 1."""
    drafted: int = Field(ge=0)
    """Rounds that drafted a token at this position."""
    accepted: int = Field(ge=0)
    """Of those, the rounds whose token at this position the target accepted."""
    rate: float | None = Field(default=None, ge=0, le=1)
    """accepted / drafted; null when nothing was drafted here."""


class CategoryResult(_Strict):
    """One configuration's figures over the prompts of one category (or all, for a bench without cells)."""

    configuration: str
    """Id of the configuration (or the run name of a llama-spec-bench file)."""
    concurrency: int | None = Field(default=None, ge=1)
    """Concurrency of the serving cell it splits; null for a single-stream bench (llama-spec-bench)."""
    category: str | None = None
    """Prompt category (language, think mode, task); null: every prompt of the run."""
    prompts: int = Field(ge=1)
    """Prompts (tasks) in the category: the n of the interval."""
    requests: int = Field(ge=1)
    """Successful requests (attempts) over those prompts."""
    failed_requests: int | None = Field(default=None, ge=0)
    """Requests of the category that failed (left out); null when the source cannot count them."""
    decode_tok_s: NonNegative
    """Mean over prompts of each prompt's decode tok/s (repetitions averaged first)."""
    sd_decode_tok_s: NonNegative
    """Sample sd (n - 1) of the per-prompt decode tok/s (0 with one prompt)."""
    ci95: Interval | None = None
    """Student-t interval of ``decode_tok_s``; null with a single prompt."""
    median_ttft_ms: NonNegative | None = None
    """Median time to first token over the category's requests (serving runs)."""
    accepted_length: NonNegative | None = None
    """1 + accepted draft tokens / draft rounds, pooled over the category; null without speculation."""
    acceptance_by_position: list[PositionAcceptance] = Field(default_factory=list)
    """Per draft position, pooled over the category (llama-spec-bench)."""


class Arm(_Strict):
    """One side of a paired comparison."""

    id: str
    """Short identifier (e.g. A, B, off, on)."""
    label: str
    """Display name (e.g. upstream, retrained)."""
    drafter: Drafter | None = None
    """Drafter of this arm (null: speculation off)."""
    setting: Setting | None = None
    """Setting that defines the arm when both arms share a drafter (e.g. n_max 0 vs 3)."""
    boots: list[int] = Field(default_factory=list)
    """Server boots (indices) this arm was measured in."""


class ComparisonRow(_Strict):
    """Paired treatment-minus-baseline result at one setting (e.g. one n_max)."""

    setting: Setting | None = None
    """Value of the comparison's setting for this row (null for a single-row comparison)."""
    baseline_mean: NonNegative
    """Mean of the baseline arm (metric units)."""
    treatment_mean: NonNegative
    """Mean of the treatment arm."""
    mean_difference: Finite
    """Mean over pairs of treatment - baseline."""
    sd_difference: NonNegative | None = None
    """Sample sd (n - 1) of the paired differences; null when the source published only the interval."""
    n: int = Field(ge=2)
    """Number of pairs (prompts)."""
    ci95: Interval
    """Student-t interval of the mean difference."""
    relative_change: Finite
    """mean_difference / baseline_mean (0.061 = +6.1%)."""
    relative_ci95: Interval | None = None
    """ci95 divided by baseline_mean."""
    ratio: float | None = Field(default=None, gt=0)
    """Geometric mean of per-pair treatment / baseline ratios (from the log-ratio analysis)."""
    ratio_ci95: Interval | None = None
    """Exponentiated t-interval of the mean log ratio."""
    p_value: float | None = Field(default=None, ge=0, le=1)
    """Two-sided paired t-test p-value."""
    per_pair_relative_range: Range | None = None
    """Smallest and largest per-pair relative change (e.g. per prompt +20.8% to +52.5%)."""
    positive_pairs: int | None = Field(default=None, ge=0)
    """Pairs where the treatment was faster."""
    role: EvaluationRole = "secondary"
    """primary (the preregistered endpoint), secondary or exploratory."""
    category: str | None = Field(default=None, exclude_if=_absent)
    """Prompt category the row pairs over (``Comparison.by_category``); null: every prompt."""


class BootSpread(_Strict):
    """How much one arm moved between server boots at one setting (not in the paired interval)."""

    arm: str
    """Id of the arm."""
    setting: Setting | None = None
    """Setting the spread was measured at."""
    boot_means: dict[str, NonNegative] = Field(default_factory=dict)
    """Mean of the arm per boot, keyed by boot index (empty when only the difference is known)."""
    last_minus_first: Finite
    """Mean of the arm's last boot minus its first boot (by boot index)."""


class Design(_Strict):
    """How the comparison was run."""

    boot_order: list[str] = Field(default_factory=list)
    """Arm id of each server boot, in order (e.g. A, B, B, A)."""
    prompts: int | None = Field(default=None, ge=1)
    """Prompts, each measured in every arm."""
    repetitions: int | None = Field(default=None, ge=1)
    """Repetitions per prompt, setting and boot."""
    predicted_tokens: int | None = Field(default=None, ge=1)
    """Tokens generated per request."""
    preregistration: str | None = None
    """Path or URL of the preregistration document, when there is one."""


class Comparison(_Strict):
    """A paired A/B: per prompt, each arm's runs are averaged, then treatment - baseline is analysed."""

    id: str
    """Stable identifier (e.g. retrain-ab, spec-on-off)."""
    title: str
    """Display title."""
    metric: str = "output tok/s"
    """What the arm means measure."""
    paired_by: str = "prompt"
    """Unit of pairing."""
    setting_name: str | None = None
    """Name of the setting that varies across rows (e.g. n_max)."""
    baseline: str
    """Id of the baseline arm."""
    treatment: str
    """Id of the treatment arm."""
    arms: list[Arm] = Field(min_length=2)
    """The arms."""
    design: Design | None = None
    """How the runs were laid out."""
    rows: list[ComparisonRow] = Field(min_length=1)
    """One paired result per setting."""
    between_boot_spread: list[BootSpread] = Field(default_factory=list)
    """Per-arm boot-to-boot movement, reported beside the paired interval."""
    notes: list[str] = Field(default_factory=list)
    """Caveats the card should carry."""
    by_category: list[ComparisonRow] = Field(default_factory=list, exclude_if=_absent)
    """The rows again, per prompt category (language, think mode, task) when the rows carry one."""
    date: str | None = Field(default=None, exclude_if=_absent)
    """Measurement date (ISO 8601) of this comparison alone, for a source that dates some tables and not the
    run; the card prints it above the table and ``.eval_results`` carry it (else the run's date)."""

    @model_validator(mode="after")
    def _check_arms(self) -> Comparison:
        ids = [arm.id for arm in self.arms]
        if len(set(ids)) != len(ids):
            raise ValueError(f"arm ids repeat: {ids}")
        for which in (self.baseline, self.treatment, *(s.arm for s in self.between_boot_spread)):
            if which not in ids:
                raise ValueError(f"arm {which!r} is not one of {ids}")
        if sum(row.role == "primary" for row in self.rows) > 1:
            raise ValueError("more than one row is marked primary")
        return self

    @property
    def primary(self) -> ComparisonRow | None:
        """The preregistered primary endpoint, if the comparison has one."""
        return next((row for row in self.rows if row.role == "primary"), None)


class SweepRow(_Strict):
    """Throughput at one value of the swept setting."""

    setting: Setting
    """Value of the swept setting (e.g. n_max = 3)."""
    mean_tok_s: NonNegative
    """Mean decode tokens/s over runs."""
    sd_tok_s: NonNegative
    """Sample standard deviation (n - 1) over runs."""
    runs: int = Field(ge=1)
    """Runs (prompts x repetitions) at this setting."""
    tokens_per_round: NonNegative | None = None
    """Output tokens per verify round, predicted_n / (predicted_n - accepted); null with speculation off."""
    step_time_ms: NonNegative | None = None
    """Time per verify round, predicted_ms / (predicted_n - accepted)."""


class FitResidual(_Strict):
    """Measured minus fitted step time at one setting."""

    setting: int | float
    """Value of the swept setting."""
    step_time_ms: NonNegative | None = None
    """Measured step time (null when only the residual was published)."""
    fitted_ms: NonNegative | None = None
    """Step time the fit predicts."""
    residual_ms: Finite
    """Measured minus fitted, ms."""
    in_range: bool
    """True when the setting lies in the fitted range (points outside it are extrapolation)."""


class StepTimeFit(_Strict):
    """Least-squares line through the step times: step time ~ intercept_ms + slope_ms x (setting - 1)."""

    setting_min: int | float
    """Smallest setting fitted (e.g. K = 1)."""
    setting_max: int | float
    """Largest setting fitted (e.g. K = 12)."""
    points: int = Field(ge=2)
    """Settings in the fit."""
    intercept_ms: Finite
    """Fitted step time at setting 1, ms."""
    slope_ms: Finite
    """Fitted increase of step time per unit of setting, ms."""
    residuals: list[FitResidual] = Field(default_factory=list)
    """Per setting with a step time, in or out of the fitted range."""


class Sweep(_Strict):
    """Absolute throughput of one drafter across values of one setting, within one boot."""

    id: str
    """Stable identifier (e.g. n-max-sweep)."""
    title: str
    """Display title."""
    setting_name: str
    """Name of the swept setting (e.g. n_max)."""
    drafter: Drafter | None = None
    """Drafter measured."""
    boots: int = Field(default=1, ge=1)
    """Server boots the sweep spans."""
    rows: list[SweepRow] = Field(min_length=1)
    """One row per setting value, in sweep order."""
    step_time_fit: StepTimeFit | None = None
    """Linear fit of step time against the setting; null with fewer than 2 speculating settings."""
    notes: list[str] = Field(default_factory=list)
    """Caveats the card should carry."""
    date: str | None = Field(default=None, exclude_if=_absent)
    """Measurement date (ISO 8601) of this sweep alone (see ``Comparison.date``)."""


def check_configuration_ids(configurations: list[Configuration]) -> None:
    """Refuse repeated configuration ids (cells name their configuration by id)."""
    known = [c.id for c in configurations]
    if len(set(known)) != len(known):
        raise ValueError(f"configuration ids repeat: {known}")


class EvaluationHeader(_Strict):
    """What an evaluation file and a ``build eval`` spec share: identity and run metadata."""

    schema_version: Literal[1]
    """Schema version; always 1."""
    title: str
    """Display title (e.g. Held-out serving evaluation, NVIDIA DGX Spark)."""
    run: Run
    """Hardware, engine, target, drafter, settings and prompts."""
    configurations: list[Configuration] = Field(default_factory=list)
    """Serving configurations of the matrix, in table order."""
    notes: list[str] = Field(default_factory=list)
    """Caveats that apply to every number in the file."""

    @model_validator(mode="after")
    def _check_configurations(self) -> EvaluationHeader:
        check_configuration_ids(self.configurations)
        return self


class Evaluation(EvaluationHeader):
    """A hubrelease evaluation file (schema_version 1)."""

    cells: list[Cell] = Field(default_factory=list)
    """One cell per configuration x concurrency, in table order."""
    comparisons: list[Comparison] = Field(default_factory=list)
    """Paired A/B comparisons."""
    sweeps: list[Sweep] = Field(default_factory=list)
    """Parameter sweeps."""
    provenance: Provenance
    """Where the numbers come from."""
    by_category: list[CategoryResult] = Field(default_factory=list, exclude_if=_absent)
    """Cells split by prompt category, and llama-spec-bench results, when the runs carry categories."""

    @model_validator(mode="after")
    def _check_cells(self) -> Evaluation:
        known = [c.id for c in self.configurations]
        seen: set[tuple[str, int]] = set()
        for cell in self.cells:
            if cell.configuration not in known:
                raise ValueError(f"cell names configuration {cell.configuration!r}, not one of {known}")
            key = (cell.configuration, cell.concurrency)
            if key in seen:
                raise ValueError(f"two cells for {cell.configuration!r} at concurrency {cell.concurrency}")
            seen.add(key)
        for result in self.by_category:
            if result.concurrency is not None and self.cell(result.configuration, result.concurrency) is None:
                raise ValueError(
                    f"by_category names {result.configuration!r} at concurrency {result.concurrency}, not a cell"
                )
        return self

    def cell(self, configuration: str, concurrency: int) -> Cell | None:
        """The cell of ``configuration`` at ``concurrency``, if measured."""
        return next(
            (c for c in self.cells if c.configuration == configuration and c.concurrency == concurrency),
            None,
        )

    def draft_tokens(self, configuration: Configuration) -> int | None:
        """Draft tokens per round of ``configuration``: its own, else the run's (None: not stated)."""
        if configuration.draft_tokens is not None:
            return configuration.draft_tokens
        return self.run.serving.draft_tokens

    def comparison(self, comparison_id: str) -> Comparison | None:
        """The comparison with id ``comparison_id``, if present."""
        return next((c for c in self.comparisons if c.id == comparison_id), None)
