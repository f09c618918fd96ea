"""The release manifest as pydantic models: pure data, validated by its types.

A manifest states everything a release claims: what it publishes (artifacts with size and
sha256), what it was built from and measured against (pins), how its card is rendered, and
whose work it credits. Field docstrings become the descriptions in ``hubrelease schema``.
"""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Discriminator, Field, Tag, model_validator

from hubrelease.fsutil import check_release_path
from hubrelease.revisions import is_commit
from hubrelease.validation import LocatedError

SCHEMA_VERSION = 1
DEFAULT_CARD = "README.md"

_SHA256 = re.compile(r"^[0-9a-f]{64}$")
_REPO_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*(/[A-Za-z0-9][A-Za-z0-9._-]*)?$")


def _sha256(value: str) -> str:
    if not _SHA256.match(value):
        raise ValueError("must be 64 lowercase hex characters (a SHA-256 digest)")
    return value


def _repo_id(value: str) -> str:
    if not _REPO_ID.match(value) or "--" in value or ".." in value or len(value) > 96:
        raise ValueError(f"{value!r} is not a valid Hub repo id ('namespace/name')")
    return value


def _superseded(value: str) -> str:
    repo_id, _, commit = value.partition("@")
    if not is_commit(commit):
        raise ValueError(f"{value!r} is not REPO@COMMIT (a 40-hex commit: what it replaces, pinned)")
    _repo_id(repo_id)
    return value


def _commit(value: str) -> str:
    if not is_commit(value):
        raise ValueError(f"{value!r} is not a 40-hex commit")
    return value


def _release_path(value: str) -> str:
    return check_release_path(value)


Sha256 = Annotated[str, AfterValidator(_sha256)]
"""A SHA-256 digest, 64 lowercase hex characters."""
RepoId = Annotated[str, AfterValidator(_repo_id)]
"""A Hub repository id, ``namespace/name``."""
Commit = Annotated[str, AfterValidator(_commit)]
"""A git commit id, 40 lowercase hex characters."""


def is_repo_id(value: object) -> bool:
    """True for a valid Hub repo id (``namespace/name``), as the ``RepoId`` type checks it."""
    try:
        return isinstance(value, str) and _repo_id(value) == value
    except ValueError:
        return False


RepoPath = Annotated[str, AfterValidator(_release_path)]
"""A POSIX path relative to the release folder (no ``..``, not absolute)."""
ByteSize = Annotated[int, Field(ge=0)]
"""A size in bytes."""

RepoType = Literal["model", "dataset", "space"]
ArtifactRole = Literal["recommended", "variant", "benchmark", "data", "doc"]
BaseModelRelation = Literal["adapter", "merge", "quantized", "finetune"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class _Revisioned(_Strict):
    """Shared rule: a revision must be a 40-hex commit unless ``unpinned`` says otherwise."""

    revision: str | None = None
    """Git commit (40 lowercase hex) of the pinned repo. A branch or tag only with ``unpinned: true``."""
    unpinned: bool = False
    """The source never published a commit; the pin is weaker (by sizes or digests only). ``hubrelease
    lock`` keeps such a pin as it is; ``lock --pin REPO_ID`` converts it to a commit on purpose."""

    @model_validator(mode="after")
    def _check_revision(self) -> _Revisioned:
        if self.unpinned:
            return self
        if self.revision is None:
            raise LocatedError("required (a 40-hex commit), or set unpinned: true", ("revision",))
        if not is_commit(self.revision):
            raise LocatedError(
                f"revision {self.revision!r} is not a 40-hex commit; pin a commit "
                "(hubrelease lock resolves branches) or set unpinned: true",
                ("revision",),
            )
        return self


class PinnedFile(_Strict):
    """A file inside a pinned repo. ``sha256`` may be absent when the source published only a size."""

    path: RepoPath
    """Path of the file inside the pinned repo."""
    size: ByteSize | None = None
    """Size in bytes."""
    sha256: Sha256 | None = None
    """SHA-256 of the file content (the Hub's LFS oid). Absent means pinned by size only."""
    header_sha256: Sha256 | None = None
    """GGUF / safetensors: SHA-256 of the header bytes (metadata + tensor infos), read with range requests.
    Pins keys, tensor names, types, shapes and offsets without downloading; not the tensor data."""
    composition: dict[str, Annotated[int, Field(ge=0)]] | None = None
    """GGUF / safetensors: tensor count per type (or dtype) in this file, as its header declares."""


class PinnedRepo(_Revisioned):
    """A Hub repository the release depends on: a target model or a warm-start drafter."""

    repo_id: RepoId
    """Hub id of the repo."""
    repo_type: RepoType = "model"
    """Kind of Hub repo."""
    name: str | None = None
    """Human name used in cards (defaults to the repo id)."""
    license: str | None = None
    """Licence of the pinned repo, as a Hub licence id (e.g. mit, apache-2.0)."""
    license_link: str | None = None
    """Where its licence text is (required for license 'other')."""
    license_decision: str | None = None
    """Why the release's licence may be used with this one, where the licence table cannot decide
    (an 'other', 'unknown' or use-restricted licence): lint accepts the pair and the card can cite it."""
    quantization: str | None = None
    """Quantization of the pinned weights (e.g. NVFP4, IQ2_KS)."""
    derived_from: list[RepoId] = Field(default_factory=list)
    """Repos this one is itself derived from (for attribution)."""
    files: list[PinnedFile] = Field(default_factory=list)
    """Files of the repo that the release relies on."""
    note: str | None = None
    """Free-text caveat about this pin."""


class PinnedDataset(_Revisioned):
    """A dataset used for training or evaluation, with the credit its licence asks for."""

    repo_id: RepoId
    """Hub id of the dataset."""
    license: str
    """Licence id of the dataset (e.g. cc-by-4.0)."""
    license_link: str | None = None
    """Where its licence text is (required for license 'other')."""
    license_decision: str | None = None
    """Why the release's licence may be used with this one, where the licence table cannot decide."""
    attribution: str | None = None
    """Credit line the licence requires (e.g. CC-BY-4.0 attribution)."""
    name: str | None = None
    """Human name used in cards."""
    role: Literal["training-source", "training", "evaluation", "released"] = "training-source"
    """How the release uses the dataset."""


class EngineBinary(_Strict):
    """A built engine object whose exact bytes produced the measurements."""

    name: str
    """File name of the binary or shared library (e.g. llama-server, libggml.so)."""
    sha256: Sha256
    """SHA-256 of the binary."""


class LocalPatches(_Strict):
    """Changes applied on top of the engine's base commit."""

    path: RepoPath | None = None
    """Where the diff is published in the release, if it is."""
    sha256: Sha256 | None = None
    """SHA-256 of the diff file."""
    files_changed: int | None = Field(default=None, ge=0)
    """Number of files the patch touches."""
    insertions: int | None = Field(default=None, ge=0)
    """Lines added."""
    deletions: int | None = Field(default=None, ge=0)
    """Lines removed."""
    lines: int | None = Field(default=None, ge=0)
    """Length of the diff file in lines."""


class Engine(_Strict):
    """The serving engine used for measurements, pinned to a commit and, where known, to binaries."""

    name: str
    """Engine name (sglang, ik_llama.cpp, llama.cpp, vllm...)."""
    repository: str
    """Source repository, e.g. https://github.com/sgl-project/sglang or ikawrakow/ik_llama.cpp."""
    commit: str
    """Base commit of the engine source (40 lowercase hex)."""
    local_patches: LocalPatches | None = None
    """Local changes on top of ``commit``."""
    build_flags: list[str] = Field(default_factory=list)
    """Build options that matter for reproducing the binaries."""
    built: str | None = None
    """Build date (ISO 8601)."""
    binaries: list[EngineBinary] = Field(default_factory=list)
    """Digests of the binaries that produced the measurements."""

    @model_validator(mode="after")
    def _check_commit(self) -> Engine:
        if not is_commit(self.commit):
            raise LocatedError(f"{self.commit!r} is not a 40-hex commit", ("commit",))
        return self


class Hardware(_Strict):
    """A machine measurements were taken on."""

    id: str
    """Short identifier used by evaluation files (e.g. dgx-spark, h200)."""
    name: str
    """Display name (e.g. NVIDIA DGX Spark (GB10))."""
    accelerator: str | None = None
    """Accelerator model."""
    count: int = Field(default=1, ge=1)
    """Number of accelerators used."""
    memory: str | None = None
    """Accelerator memory, as marketed (e.g. 141GB HBM3e)."""


class ExternalFile(_Strict):
    """A file the release depends on but does not publish, pinned by digest (e.g. upstream code)."""

    name: str
    """File name."""
    source: str
    """Where it comes from (repo id or URL)."""
    sha256: Sha256
    """SHA-256 of the copy that was used."""


class Pins(_Strict):
    """Everything the release was built from or measured against."""

    targets: list[PinnedRepo] = Field(default_factory=list)
    """Target models the drafter serves."""
    base_drafters: list[PinnedRepo] = Field(default_factory=list)
    """Warm-start / upstream drafters the weights were initialised from."""
    datasets: list[PinnedDataset] = Field(default_factory=list)
    """Datasets used or released."""
    engines: list[Engine] = Field(default_factory=list)
    """Serving engines used for the measurements."""
    hardware: list[Hardware] = Field(default_factory=list)
    """Machines used for the measurements."""
    external_files: list[ExternalFile] = Field(default_factory=list)
    """Unpublished dependencies pinned by digest."""


def _input_path(value: str) -> str:
    parts = value.split("/")
    if not value or value.startswith("/") or "\\" in value or _CONTROL.search(value) or "" in parts:
        raise ValueError(f"{value!r} must be a relative POSIX path from the release folder")
    return value


InputPath = Annotated[str, AfterValidator(_input_path)]
"""A POSIX path from the release folder; unlike a release path it may lead outside (``../target.gguf``)."""


class RecipeInput(_Strict):
    """A file a builder read, pinned by digest, so a rebuild can tell whether it reads the same bytes."""

    path: InputPath | None = None
    """The file, relative to the release folder (``../`` leads outside it)."""
    uri: str | None = None
    """``hf://REPO@COMMIT/PATH``: a file read on the Hub at a commit (its header only)."""
    size: ByteSize | None = None
    """Size in bytes (a whole-file input)."""
    sha256: Sha256 | None = None
    """SHA-256 of the whole file."""
    header_sha256: Sha256 | None = None
    """SHA-256 of a GGUF file's header, for inputs of which the builder reads only the header
    (``--tokenizer-from``): metadata keys and tensor infos, not the tensor data."""

    @model_validator(mode="after")
    def _check_input(self) -> RecipeInput:
        if (self.path is None) == (self.uri is None):
            raise LocatedError("give path or uri, one of them", ("path",))
        if self.sha256 is None and self.header_sha256 is None:
            raise LocatedError("an input needs sha256 or header_sha256", ("sha256",))
        if self.uri is not None and not (self.uri.startswith("hf://") and "@" in self.uri):
            raise LocatedError(f"{self.uri!r} is not an hf://REPO@COMMIT/PATH location", ("uri",))
        return self

    @property
    def name(self) -> str:
        """The path or the location: how reports name the input."""
        return self.path if self.path is not None else str(self.uri)


class Recipe(_Strict):
    """How an artifact was produced, so ``hubrelease rebuild`` can re-run it and compare the bytes."""

    builder: str
    """The hubrelease builder or external tool (e.g. gguf-drafter, llama-quantize)."""
    source: str | None = None
    """Input path or repo the builder read."""
    out: InputPath | None = None
    """Where the builder wrote, relative to the release folder (an output folder or file); absent in
    recipes of older builds: then the artifact's own folder (or GGUF file)."""
    options: dict[str, str | int | float | bool | list[str]] = Field(default_factory=dict)
    """Builder options as recorded."""
    inputs: list[RecipeInput] = Field(default_factory=list)
    """Every file the builder read, by digest (absent in recipes of older builds: not compared)."""
    tools: dict[str, str] = Field(default_factory=dict)
    """Versions of hubrelease and of the libraries that shape the output's bytes, at build time."""


class Artifact(_Strict):
    """A file the release publishes."""

    path: RepoPath
    """Path of the file in the Hub repo."""
    local: RepoPath | None = None
    """Path of the file in the release folder, when it differs from ``path``."""
    size: ByteSize | None = None
    """Exact size in bytes."""
    sha256: Sha256 | None = None
    """SHA-256 of the content (the field name is the algorithm)."""
    reported_size: str | None = None
    """Size as the source stated it when the exact byte count is unknown (e.g. '737 MB')."""
    role: ArtifactRole = "variant"
    """recommended | variant | benchmark | data | doc."""
    description: str | None = None
    """Short note for the card's files table."""
    recipe: Recipe | None = None
    """Optional build recipe."""
    composition: dict[str, Annotated[int, Field(ge=0)]] | None = None
    """Expected GGUF tensor-type counts, e.g. {F32: 26, Q8_0: 24, IQ3_KS: 12, IQ4_KSS: 7}."""
    lint: bool = False
    """Run drafter lint on this file during verify."""
    lint_config: RepoPath | None = None
    """config.json to lint the file against."""

    @property
    def local_path(self) -> str:
        """Where the file lives in the release folder."""
        return self.local or self.path


class Release(_Strict):
    """Identity and Hub metadata of the published repo."""

    repo_id: RepoId
    """Hub id the release is published to."""
    repo_type: RepoType = "model"
    """model | dataset | space."""
    revision: str = "main"
    """Branch the release is pushed to."""
    private: bool | None = None
    """Visibility: a new repo is created private (true) or public (false); push refuses to flip an
    existing repo's visibility. Absent: the Hub's default for new repos, any for existing ones."""
    title: str | None = None
    """Display title for the card."""
    license: str
    """Hub licence id (apache-2.0, mit, cc-by-4.0, other...)."""
    license_name: str | None = None
    """Required when license is 'other'."""
    license_link: str | None = None
    """Required when license is 'other'."""
    base_model: list[RepoId] = Field(default_factory=list)
    """Hub ids of the base model(s)."""
    base_model_relation: BaseModelRelation | None = None
    """adapter | merge | quantized | finetune."""
    pipeline_tag: str | None = None
    """Hub pipeline tag (e.g. text-generation)."""
    library_name: str | None = None
    """Hub library name (e.g. gguf, sglang, transformers)."""
    tags: list[str] = Field(default_factory=list)
    """Hub tags."""
    inference: bool | None = None
    """Hub inference widget switch (false for drafters)."""
    supersedes: Annotated[str, AfterValidator(_superseded)] | None = None
    """``REPO@COMMIT`` of the release this one replaces, pinned: ``hubrelease diff MANIFEST`` compares with it,
    and ``diff MANIFEST --record`` pins the changes (``changes.json``) the card's "Changes since" renders."""

    @model_validator(mode="after")
    def _check_license(self) -> Release:
        if self.license == "other" and not (self.license_name and self.license_link):
            raise LocatedError("license 'other' needs license_name and license_link", ("license",))
        if self.base_model_relation and not self.base_model:
            raise LocatedError("base_model_relation needs base_model", ("base_model_relation",))
        return self


UsageValueRef = Literal[
    "release.repo_id",
    "release.revision",
    "target.repo_id",
    "target.revision",
    "target.first_file",
    "recommended.path",
]
"""Where a usage flag takes its value from, so a command line cannot drift from the pins."""


class UsageFlag(_Strict):
    """One flag of a usage command line, as the measurements used it."""

    flag: str = Field(min_length=1)
    """The flag itself (e.g. --kv-cache-dtype)."""
    value: str | int | float | None = None
    """Literal value as recorded (omit for a switch)."""
    value_from: UsageValueRef | None = None
    """Take the value from the manifest instead: release.repo_id, release.revision (the drafter's branch in
    the card, the commit in ``hubrelease pull``), target.repo_id, target.revision, target.first_file (first
    pinned file of the target) or recommended.path (the recommended artifact)."""
    same_line: bool = False
    """Print on the same line as the previous flag (layout only)."""

    @model_validator(mode="after")
    def _check_value(self) -> UsageFlag:
        if self.value is not None and self.value_from is not None:
            raise LocatedError("give value or value_from, not both", ("value_from",))
        return self


class Usage(_Strict):
    """A command line the card shows; values that are pins come from the pins."""

    engine: str
    """Name of the pins.engines entry that runs the command (its commit is shown)."""
    executable: str = Field(min_length=1)
    """Program and subcommand (e.g. 'sglang serve', 'llama-server')."""
    target: RepoId | None = None
    """Repo id of the pins.targets entry the command serves (default: the first target)."""
    flags: list[UsageFlag] = Field(default_factory=list)
    """Flags, in order."""


class SpeedupClaim(_Strict):
    """A throughput claim computed from one evaluation matrix: configuration vs baseline at one concurrency."""

    kind: Literal["speedup"]
    """speedup."""
    id: str
    """Name templates use (``claims['<id>']``)."""
    evaluation: RepoPath
    """Evaluation file (one of ``evaluations``)."""
    configuration: str
    """Configuration id of the treatment."""
    baseline: str
    """Configuration id of the baseline (e.g. autoregressive)."""
    concurrency: int = Field(default=1, ge=1)
    """Concurrency the claim is made at."""
    metric: Literal["overall_tok_s", "per_user_tok_s"] = "overall_tok_s"
    """Cell metric compared."""


class ComparisonClaim(_Strict):
    """A claim read from one row of a paired comparison (its relative change and interval)."""

    kind: Literal["comparison"]
    """comparison."""
    id: str
    """Name templates use (``claims['<id>']``)."""
    evaluation: RepoPath
    """Evaluation file (one of ``evaluations``)."""
    comparison: str
    """Comparison id inside the evaluation file."""
    setting: int | float | str | None = None
    """Row setting (default: the primary row, or the only row)."""
    digits: int = Field(default=3, ge=0, le=6)
    """Decimals printed for the paired difference and its interval."""


Claim = Annotated[SpeedupClaim | ComparisonClaim, Field(discriminator="kind")]


class CardSection(_Strict):
    """A section of free prose (Markdown) the release author writes; numbers belong in claims."""

    title: str
    """Section heading."""
    body: str | None = None
    """Markdown body, typed in the manifest."""
    path: RepoPath | None = None
    """A Markdown file of the release (an artifact, pinned by sha256) holding the body instead: the
    publisher's prose (design rationale, caveats) is then a published file that verify checks."""
    place: Literal["evaluation", "end"] = "end"
    """Where the template puts it: after the measurements (``evaluation``; at the end on a card without
    them) or after training (``end``)."""

    @model_validator(mode="after")
    def _one_body(self) -> CardSection:
        if (self.body is None) == (self.path is None):
            raise ValueError("a section has a body or a path (a Markdown file of the release), exactly one")
        return self


HAND_WRITTEN = "none"
"""``card.template`` value for a card the author writes by hand (pinned by ``card.size`` / ``card.sha256``)."""


class Card(_Strict):
    """How the README is rendered, or (``template: none``) which hand-written README is published."""

    template: str = "safetensors_drafter"
    """A built-in template name, a path (inside the release folder) to a Jinja2 template, or
    ``none`` for a hand-written card that render-card never touches."""
    output: RepoPath = "README.md"
    """Where the rendered card is written, relative to the release folder."""
    size: ByteSize | None = None
    """Size of a hand-written card (``template: none``)."""
    sha256: Sha256 | None = None
    """SHA-256 of a hand-written card (``template: none``): verify and push check it like an artifact."""
    summary: str | None = None
    """Opening paragraph (Markdown) under the title."""
    usage: list[Usage] = Field(default_factory=list)
    """Command lines to show, built from the pins."""
    claims: list[Claim] = Field(default_factory=list)
    """Claims computed from the evaluation files (never typed)."""
    sections: list[CardSection] = Field(default_factory=list)
    """Extra prose sections, each where its ``place`` says."""
    variables: dict[str, object] = Field(default_factory=dict)
    """Free values the template may use (``card.variables`` in the context)."""
    charts: bool = False
    """Draw SVG charts of the evaluations beside the card (``charts/*.svg``, linked from it); render-card
    writes them and pins each as an artifact, and ``--check`` compares them byte for byte."""
    digits: dict[str, Annotated[int, Field(ge=0, le=6)]] = Field(default_factory=dict)
    """Decimals of a comparison's paired differences and intervals in its table, by comparison id
    (default 3), so a card prints them as its source does (seed 001's on/off pair: 2)."""
    recipe: Recipe | None = None
    """How a builder wrote a hand-written card (``build dataset-card --manifest``), for ``rebuild``."""

    @property
    def hand_written(self) -> bool:
        """True when the card is the author's file, not a render."""
        return self.template == HAND_WRITTEN

    @model_validator(mode="after")
    def _check_pins(self) -> Card:
        if not self.hand_written and self.recipe is not None:
            raise LocatedError("a recipe belongs to a built card (template: none)", ("recipe",))
        if not self.hand_written and (self.size is not None or self.sha256 is not None):
            field = "sha256" if self.sha256 is not None else "size"
            raise LocatedError(
                "size and sha256 pin a hand-written card (template: none); a rendered card is checked "
                "by `render-card --check`",
                (field,),
            )
        return self


class Training(_Strict):
    """Where the facts of how the drafter was trained live: published files the card reads, never typed."""

    config: RepoPath | None = None
    """The drafter's checkpoint config (an artifact, e.g. config.json): architecture, block size, sliding
    window, selector rank / top-k, captured target layers, projection width, rope_theta."""
    arguments: RepoPath | None = None
    """Trainer arguments (an artifact; JSON object, Hugging Face TrainingArguments names: learning_rate,
    per_device_train_batch_size, gradient_accumulation_steps, world_size, optim, lr_scheduler_type,
    warmup_steps, max_steps; plus the trainer's own, e.g. num_anchors, or global_batch_size where only the
    effective batch is known). A key the source does not state is left out: the card says "not stated"."""
    state: RepoPath | None = None
    """Trainer state (an artifact; trainer_state.json): ``global_step`` is the optimizer steps taken."""
    data: RepoPath | None = None
    """The training data's counts (an artifact): ``hubrelease build dataset-card --json``'s report
    (conversations, completion_tokens)."""
    dataset: RepoId | None = None
    """The pins.datasets entry ``data`` describes."""
    capture_hardware: str | None = None
    """pins.hardware id of the machine the target features were captured on."""
    hardware: str | None = None
    """pins.hardware id of the machine the drafter was trained on."""


class Notices(_Strict):
    """Credit and disclaimers that the card must carry."""

    attribution: list[str] = Field(default_factory=list)
    """Attribution lines (licences that require credit)."""
    not_affiliated_with: list[str] = Field(default_factory=list)
    """Organisations the release is not affiliated with."""
    references: list[str] = Field(default_factory=list)
    """Papers or code referenced."""


ProvenanceField = Literal[
    "target", "target.revision", "engine", "engine.commit", "engine.binaries", "drafter", "hardware"
]
"""What of an evaluation's run metadata is bound to the pins (``hubrelease.evaluation.provenance``)."""


class Deviation(_Strict):
    """A deliberate difference between an evaluation's run metadata and the pins, stated, so the card says it."""

    field: ProvenanceField
    """What differs: target, target.revision, engine, engine.commit, engine.binaries, drafter or hardware."""
    note: str = Field(min_length=1)
    """Why, as the card prints it next to the measured value."""


KEY_FINGERPRINT = re.compile(r"^sha256:[0-9a-f]{64}$")
"""A public key's fingerprint: SHA-256 of its DER SubjectPublicKeyInfo (``openssl pkey -pubin -outform DER``)."""
GITHUB_ISSUER = "https://token.actions.githubusercontent.com"
"""The OIDC issuer of GitHub Actions' identity tokens (Fulcio's ``1.3.6.1.4.1.57264.1.1``)."""
_WORKFLOW_PATH = re.compile(r"^\.github/workflows/[A-Za-z0-9._-]+\.ya?ml$")
_REF = re.compile(r"^refs/(heads|tags)/[A-Za-z0-9._/*?-]+$")


class GitHubWorkflow(_Strict):
    """The GitHub Actions workflow that signs keyless: what a CI-signed release is known by.

    Checked against the Fulcio certificate's GitHub extensions (repository, ref) and its SAN
    (``https://github.com/REPOSITORY/WORKFLOW@REF``)."""

    repository: RepoId
    """``OWNER/REPO`` on GitHub."""
    workflow: str = Field(pattern=_WORKFLOW_PATH.pattern)
    """The workflow file, e.g. ``.github/workflows/release.yml``."""
    ref: str = Field(default="refs/tags/*", pattern=_REF.pattern)
    """The git ref it ran for: exact, or a shell pattern (``refs/tags/v*``)."""

    @property
    def san_prefix(self) -> str:
        """The certificate's SAN up to the ref."""
        return f"https://github.com/{self.repository}/{self.workflow}@"


def _identity_kind(value: object) -> str:
    return "workflow" if isinstance(value, (dict, GitHubWorkflow)) else "text"


SignerIdentity = Annotated[
    Annotated[str, Tag("text")] | Annotated[GitHubWorkflow, Tag("workflow")], Discriminator(_identity_kind)
]
"""A fingerprint or SAN (text), or a GitHub workflow (a mapping): errors name the one given."""


class Signing(_Strict):
    """How ``model.sig`` is signed (``hubrelease sign``) and by whom: the card says how to check it,
    ``sign`` and ``push`` refuse another signer, ``verify --signature`` checks the pinned identity."""

    method: Literal["key", "certificate", "sigstore"]
    """``key`` (an EC key pair), ``certificate`` (an EC key with an X.509 chain) or ``sigstore``
    (keyless: a Fulcio certificate for a CI job's OIDC identity, logged in Rekor)."""
    public_key: RepoPath | None = None
    """``key``: the signer's public key (PEM), a file in the release folder (list it as an artifact
    to publish it; readers check it against ``identity`` before they use it)."""
    certificate_chain: list[RepoPath] = Field(default_factory=list)
    """``certificate``: the certificates (PEM, files in the release folder) a verifier trusts, root last."""
    identity: SignerIdentity | None = None
    """Who signs. ``key``: the key's fingerprint, ``sha256:HEX`` of its DER SubjectPublicKeyInfo
    (``hubrelease sign --pin-identity`` records it). ``certificate``: the same of the root
    certificate's key (the last of ``certificate_chain``). ``sigstore``: the certificate's SAN,
    matched exactly, with ``issuer``; or a GitHub workflow (``repository``, ``workflow``, ``ref``)."""
    issuer: str | None = None
    """``sigstore`` with a SAN identity: the OIDC issuer, e.g. ``https://token.actions.githubusercontent.com``."""

    @model_validator(mode="after")
    def _check_method(self) -> Signing:
        wanted = {"key": ("public_key",), "certificate": ("certificate_chain",), "sigstore": ("identity",)}
        for name in wanted[self.method]:
            if not getattr(self, name):
                raise LocatedError(f"signing.method {self.method} needs {name}", (name,))
        for method, names in wanted.items():
            stray = [name for name in names if method != self.method and getattr(self, name)]
            if stray and stray != ["identity"]:
                raise LocatedError(
                    f"{stray[0]} belongs to signing.method {method}, not {self.method}", (stray[0],)
                )
        if self.method == "sigstore":
            self._check_keyless()
            return self
        if self.issuer is not None:
            raise LocatedError(f"issuer belongs to signing.method sigstore, not {self.method}", ("issuer",))
        if self.identity is not None and not (
            isinstance(self.identity, str) and KEY_FINGERPRINT.match(self.identity)
        ):
            raise LocatedError(
                f"signing.method {self.method} pins a key fingerprint: sha256: and 64 lowercase hex digits "
                "(hubrelease sign --pin-identity records it)",
                ("identity",),
            )
        return self

    def _check_keyless(self) -> None:
        if isinstance(self.identity, GitHubWorkflow):
            if self.issuer not in (None, GITHUB_ISSUER):
                raise LocatedError(f"a GitHub workflow identity is issued by {GITHUB_ISSUER}", ("issuer",))
        elif self.issuer is None:
            raise LocatedError("signing.method sigstore needs issuer", ("issuer",))


class EvaluationFile(_Strict):
    """An evaluation file pinned like an artifact: every number in the card comes from these bytes."""

    path: RepoPath
    """Path of the file in the release folder (and the repo)."""
    size: ByteSize | None = None
    """Exact size in bytes."""
    sha256: Sha256 | None = None
    """SHA-256 of the file."""
    deviations: list[Deviation] = Field(default_factory=list)
    """Where the evaluation's run differs from the pins by design; any other difference is refused."""
    recipe: Recipe | None = None
    """How ``build eval --manifest`` computed the file from its raw runs (``hubrelease rebuild``)."""


def _root(value: str) -> str:
    if not value or _CONTROL.search(value) or value.startswith("/") or "\\" in value:
        raise ValueError(f"root {value!r} must be a relative POSIX path to the release folder")
    return value


_CONTROL = re.compile("[\x00-\x1f\x7f\ud800-\udfff]")


class Manifest(_Strict):
    """A hubrelease manifest (schema_version 1)."""

    schema_version: Literal[1]
    """Manifest schema version; always 1."""
    root: Annotated[str, AfterValidator(_root)] | None = None
    """The release folder, relative to this manifest's folder (``init --out`` writes it); default:
    the manifest's folder. ``--dir`` overrides it. A published manifest never carries it."""
    release: Release
    """The published repo."""
    pins: Pins = Field(default_factory=Pins)
    """Inputs: targets, drafters, datasets, engines, hardware."""
    artifacts: list[Artifact] = Field(default_factory=list)
    """Every file to publish."""
    evaluations: list[RepoPath | EvaluationFile] = Field(default_factory=list)
    """Evaluation JSON files (relative to the release folder): a path, or ``{path, size, sha256}``
    (``hubrelease add`` records both; verify then checks them like artifacts)."""
    card: Card | None = None
    """Model or dataset card rendering."""
    training: Training | None = None
    """How the drafter was trained, as files the card reads (config, trainer arguments and state, data counts)."""
    notices: Notices = Field(default_factory=Notices)
    """Attribution and disclaimers."""
    ignore: list[str] = Field(default_factory=list)
    """Glob patterns (relative to the release folder) that verify does not report as unlisted."""
    signing: Signing | None = None
    """How the release's ``model.sig`` is signed (OpenSSF Model Signing), for the card and ``verify --signature``."""
    imported_at: Commit | None = None
    """The Hub commit ``hubrelease import`` described, in a repo hubrelease had not published (no manifest
    there). ``verify --remote`` then states the published manifest's absence as a note, not drift: the
    first ``push`` publishes it."""

    @model_validator(mode="after")
    def _check_unique_paths(self) -> Manifest:
        _unique([a.path for a in self.artifacts], "artifacts", "path")
        _unique([a.local_path for a in self.artifacts], "artifacts", "local")
        _unique(self.evaluation_paths, "evaluations", None)
        # Without a card section, a README.md listed as an artifact is simply a pinned hand-written card.
        output = self.card.output if self.card is not None else None
        clash = {a.path for a in self.artifacts} | {a.local_path for a in self.artifacts}
        if output is not None and (output in clash or output in self.evaluation_paths):
            what = "an evaluation file" if output in self.evaluation_paths else "an artifact"
            loc = ("card", "output")
            raise LocatedError(
                f"{output!r} is the card and {what}: the card is never an artifact "
                "(`hubrelease rm` it; a hand-written card is kept with card.template: none)",
                loc,
            )
        return self

    @property
    def evaluation_files(self) -> list[EvaluationFile]:
        """Every evaluation file with whatever is pinned about it."""
        return [EvaluationFile(path=e) if isinstance(e, str) else e for e in self.evaluations]

    @property
    def evaluation_paths(self) -> list[str]:
        """Paths of the evaluation files."""
        return [e if isinstance(e, str) else e.path for e in self.evaluations]

    @property
    def card_output(self) -> str:
        """Where the card lives in the release folder (``README.md`` without a ``card:`` section)."""
        return self.card.output if self.card is not None else DEFAULT_CARD

    def artifact(self, path: str) -> Artifact | None:
        """The artifact published at ``path``, if any."""
        return next((a for a in self.artifacts if a.path == path), None)


def _unique(values: list[str], collection: str, field: str | None) -> None:
    seen: set[str] = set()
    for index, value in enumerate(values):
        if value in seen:
            loc: tuple[str | int, ...] = (collection, index) + ((field,) if field else ())
            raise LocatedError(f"{value!r} is listed twice", loc)
        seen.add(value)
