"""A dataset card (README.md) for a folder of generated conversations, every number computed from the shards.

Front matter goes through huggingface_hub's ``DatasetCardData`` and is parsed back with ``DatasetCard``
so what we write is what the Hub reads; ``dataset_info`` uses ``datasets``' own YAML form, as
``push_to_hub`` writes it. The body is ``templates/dataset_card.md.j2``, which only formats.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2
from huggingface_hub import DatasetCard, DatasetCardData

from hubrelease.builders.dataset_scan import ShardScan, scan_shards
from hubrelease.errors import BuildError
from hubrelease.hashing import sha256_file
from hubrelease.manifest import Manifest
from hubrelease.progress import NULL_PROGRESS, Progress

TEMPLATES = Path(__file__).resolve().parent.parent / "templates"
"""Built-in templates (``hubrelease/templates`` links to the repo's ``templates/``)."""
# Buckets of DatasetCardData's size_categories (they count examples, not tokens): (upper bound, label).
_SIZE_BUCKETS = [
    (1_000, "n<1K"),
    (10_000, "1K<n<10K"),
    (100_000, "10K<n<100K"),
    (1_000_000, "100K<n<1M"),
    (10_000_000, "1M<n<10M"),
    (100_000_000, "10M<n<100M"),
    (1_000_000_000, "100M<n<1B"),
    (10_000_000_000, "1B<n<10B"),
    (100_000_000_000, "10B<n<100B"),
    (1_000_000_000_000, "100B<n<1T"),
]


def size_category(rows: int) -> str:
    """The Hub's size bucket for a row count."""
    return next((label for bound, label in _SIZE_BUCKETS if rows < bound), "n>1T")


def _ranked(counter: Counter[str]) -> dict[str, int]:
    return dict(sorted(counter.items(), key=lambda item: (-item[1], item[0])))


@dataclass(frozen=True)
class DatasetSummary:
    """Everything the card states about the data."""

    shards: tuple[ShardScan, ...]
    conversations: int
    completion_tokens: int
    token_source: str
    """How completion tokens were counted (stored column, or which tokenizer)."""
    categories: dict[str, int]
    licenses: dict[str, int]
    generators: dict[str, int]
    content_sha256: str
    """Re-shard-invariant digest of every row (``content_digest``, version 1)."""
    arrow_bytes: int
    download_bytes: int
    features: list[dict[str, Any]]


def summarise(
    data: Path,
    *,
    count_column: str = "completion_tokens",
    tokenizer: Path | None = None,
    progress: Progress = NULL_PROGRESS,
) -> DatasetSummary:
    """Scan the shards under ``data`` and total them."""
    result = scan_shards(data, count_column=count_column, tokenizer=tokenizer, progress=progress)
    scans = result.shards
    tallies: dict[str, Counter[str]] = {name: Counter() for name in ("category", "license", "generator")}
    for scan in scans:
        for name, counts in scan.tallies.items():
            tallies[name].update(counts)
    if tokenizer is not None:
        source = f"tokenized assistant turns with {tokenizer.name} (sha256 {sha256_file(tokenizer)})"
    else:
        source = f"sum of the stored `{count_column}` column"
    return DatasetSummary(
        shards=tuple(scans),
        conversations=sum(s.rows for s in scans),
        completion_tokens=sum(s.completion_tokens for s in scans),
        token_source=source,
        categories=_ranked(tallies["category"]),
        licenses=_ranked(tallies["license"]),
        generators=_ranked(tallies["generator"]),
        content_sha256=result.content_sha256,
        arrow_bytes=sum(s.arrow_bytes for s in scans),
        download_bytes=sum(s.file_bytes for s in scans),
        features=result.features,
    )


@dataclass(frozen=True)
class CardInfo:
    """Identity and credit the card states beyond the data: only what the manifest or the options say.

    Nothing is built in: no licence, source dataset, language or credit line is assumed, so a card
    never claims a provenance its data does not have.
    """

    pretty_name: str
    license: str | None
    source_datasets: list[str]
    attribution: list[str]
    tags: list[str]
    language: list[str]


@dataclass(frozen=True)
class CardOptions:
    """``build dataset-card`` options that state facts the shards cannot (each adds to the manifest's)."""

    license: str | None = None
    source_datasets: tuple[str, ...] = ()
    languages: tuple[str, ...] = ()
    attribution: tuple[str, ...] = ()


def card_info(data: Path, manifest: Manifest | None, options: CardOptions = CardOptions()) -> CardInfo:
    """Card identity from the manifest (release, ``pins.datasets``, notices) and the options."""
    sources = list(options.source_datasets)
    credits = list(options.attribution)
    if manifest is None:
        return CardInfo(data.resolve().name, options.license, sources, credits, [], list(options.languages))
    release = manifest.release
    training = [d for d in manifest.pins.datasets if d.role in ("training-source", "training")]
    sources = [d.repo_id for d in training] + [s for s in sources if s not in {d.repo_id for d in training}]
    credits = [d.attribution for d in manifest.pins.datasets if d.attribution] + [
        *manifest.notices.attribution,
        *credits,
    ]
    return CardInfo(
        pretty_name=release.title or release.repo_id.split("/")[-1],
        license=options.license or release.license,
        source_datasets=sources,
        attribution=credits,
        tags=list(release.tags),
        language=list(options.languages),
    )


def shard_prefix(data: Path, out: Path) -> str:
    """Where the shards sit relative to the card (``data/``, or ``""`` beside it): repo paths in the card."""
    try:
        prefix = data.resolve().relative_to(out.resolve().parent).as_posix()
    except ValueError:
        prefix = data.resolve().name
    return "" if prefix == "." else f"{prefix}/"


def data_files_glob(summary: DatasetSummary, prefix: str) -> str:
    """Glob matching every shard, as ``configs[].data_files[].path`` wants."""
    suffixes = {Path(s.path).suffix for s in summary.shards}
    nested = any("/" in s.path for s in summary.shards)
    return prefix + ("**/*" if nested else "*") + (suffixes.pop() if len(suffixes) == 1 else "")


def card_data(summary: DatasetSummary, info: CardInfo, data_files: str) -> DatasetCardData:
    """The front matter, in the shape ``datasets.push_to_hub`` writes for a single default config."""
    from datasets.info import DatasetInfo
    from datasets.splits import SplitDict, SplitInfo

    dataset_info = DatasetInfo(
        splits=SplitDict(
            {
                "train": SplitInfo(
                    name="train", num_bytes=summary.arrow_bytes, num_examples=summary.conversations
                )
            }
        ),
        download_size=summary.download_bytes,
        dataset_size=summary.arrow_bytes,
    )._to_yaml_dict()
    return DatasetCardData(
        language=info.language or None,
        license=info.license,
        size_categories=[size_category(summary.conversations)],
        source_datasets=info.source_datasets or None,
        task_categories=["text-generation"],
        pretty_name=info.pretty_name,
        tags=info.tags or None,
        configs=[{"config_name": "default", "data_files": [{"split": "train", "path": data_files}]}],
        dataset_info={"features": summary.features, **dataset_info},
    )


def render_card(summary: DatasetSummary, info: CardInfo, prefix: str) -> str:
    """Front matter + body; refuses to return front matter the Hub would read differently."""
    front = card_data(summary, info, data_files_glob(summary, prefix))
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,  # markdown, not HTML
    )
    body = env.get_template("dataset_card.md.j2").render(summary=summary, info=info, shard_prefix=prefix)
    text = f"---\n{front.to_yaml()}\n---\n\n{body}"
    # CardData.to_dict is untyped in huggingface_hub 2.4.
    read_back: dict[str, Any] = DatasetCard(text).data.to_dict()  # type: ignore[no-untyped-call]
    if read_back != front.to_dict():  # type: ignore[no-untyped-call]
        raise BuildError("the card's YAML front matter does not read back as written")
    return text


def dataset_card_text(
    data: Path,
    out: Path,
    *,
    manifest: Manifest | None,
    tokenizer: Path | None = None,
    count_column: str = "completion_tokens",
    options: CardOptions = CardOptions(),
    progress: Progress = NULL_PROGRESS,
) -> tuple[DatasetSummary, str]:
    """The summary and the card text for a card that will live at ``out`` (shard links are relative to it)."""
    info = card_info(data, manifest, options)
    summary = summarise(data, count_column=count_column, tokenizer=tokenizer, progress=progress)
    return summary, render_card(summary, info, shard_prefix(data, out))


def recipe_options(count_column: str, options: CardOptions) -> dict[str, Any]:
    """The options a card's recipe records (``hubrelease rebuild`` passes them back)."""
    return {
        "count_column": count_column,
        "license": options.license,
        "source_datasets": list(options.source_datasets),
        "languages": list(options.languages),
        "attribution": list(options.attribution),
    }
