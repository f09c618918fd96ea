"""Render a card: front matter + a Jinja2 body, byte-for-byte reproducible, and check it against disk.

Templates run with ``StrictUndefined``: a missing value fails (with template file, line and name)
instead of printing an empty cell, unlike huggingface_hub's ``from_template``, which prints
"[More Information Needed]". A manifest's own template is untrusted input (the CI gate renders
it): it must sit inside the release folder, runs in Jinja's ``SandboxedEnvironment`` and can load
only files of its own folder and the built-ins, so it reaches neither ``os`` nor the token file.
Every rendered card carries ``MARKER``; ``render-card`` replaces no file without it unless forced. Built-in templates live in the repo's top-level ``templates/``;
``hubrelease/templates`` is a symlink to it, so the same files ship as package data in a wheel
and are found from a source checkout or an editable install alike.
"""

from __future__ import annotations

import contextlib
import difflib
import functools
import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePath, PurePosixPath
from types import ModuleType, TracebackType

import jinja2
import jinja2.bccache

from hubrelease import __version__
from hubrelease.card import budget
from hubrelease.card.budget import BudgetExceeded, MeteredSandbox, check_size, metered
from hubrelease.card.context import build_context
from hubrelease.card.filters import FILTERS
from hubrelease.card.frontmatter import front_matter
from hubrelease.card.marker import MARKER
from hubrelease.errors import CheckFailed, InputError, ManifestError
from hubrelease.evaluation import Evaluation, load_evaluation
from hubrelease.evaluation.provenance import check_provenance
from hubrelease.manifest import Manifest, load_manifest, release_root
from hubrelease.manifest.models import Card

BUILTIN_DIR = Path(__file__).resolve().parent.parent / "templates"
"""Built-in templates (``hubrelease/templates`` -> the repo's ``templates/``)."""
_UNDEFINED_NAME = re.compile(r"'([^']+)' is undefined|has no attribute '([^']+)'")


# Card templates that take the ``CardContext``; other files in templates/ are partials (``_*.md.j2``)
# or belong to other commands (``dataset_card.md.j2`` is ``build dataset-card``'s, with its own context).
_CARD_TEMPLATES = ("dataset_release", "gguf_drafter", "safetensors_drafter")


def builtin_templates() -> list[str]:
    """Names usable as ``card.template``."""
    return list(_CARD_TEMPLATES)


def _display(path: str | Path) -> str:
    resolved = Path(path).resolve()
    for base in (Path.cwd(), BUILTIN_DIR.parent.parent):
        if resolved.is_relative_to(base.resolve()):
            return str(resolved.relative_to(base.resolve()))
    return str(path)


def _template_location(tb: TracebackType | None) -> tuple[str | None, int | None]:
    """Innermost template frame of a render traceback (jinja marks its rewritten frames)."""
    where: tuple[str | None, int | None] = (None, None)
    while tb is not None:
        if "__jinja_exception__" in tb.tb_frame.f_globals:
            where = (tb.tb_frame.f_code.co_filename, tb.tb_lineno)
        tb = tb.tb_next
    return where


def _resolve(card: Card, root: Path, manifest_path: Path) -> tuple[tuple[Path, ...], str]:
    """Search path and template name for ``card.template``: a built-in name, or a path inside the release folder."""
    value = card.template
    if card.hand_written:
        raise InputError(
            f"card.template is {value!r}: {card.output} is hand-written and pinned by digest, never rendered "
            "(`hubrelease add` re-pins it after an edit)",
            path=manifest_path,
        )
    if value.endswith(".j2") or "/" in value:
        real_root = root.resolve()
        template = (root / value).resolve()
        if not template.is_relative_to(real_root):
            raise ManifestError(
                f"template {value!r} resolves outside the release folder {root}",
                path=manifest_path,
                field="card.template",
            )
        if not template.is_file():
            raise ManifestError(
                f"template file {root / value} not found", path=manifest_path, field="card.template"
            )
        return (template.parent, BUILTIN_DIR), template.name
    name = f"{value}.md.j2"
    if value not in _CARD_TEMPLATES:
        raise ManifestError(
            f"{value!r} is not a built-in template ({', '.join(builtin_templates())}), 'none' "
            "(a hand-written card) or a path ending in .j2",
            path=manifest_path,
            field="card.template",
        )
    return (BUILTIN_DIR,), name


class _ConfinedLoader(jinja2.FileSystemLoader):
    """``FileSystemLoader`` that also refuses files whose real path (symlinks followed) leaves its folders.

    Jinja already refuses ``..`` in template names; a symlink inside the folder is the remaining way out.
    """

    def get_source(
        self, environment: jinja2.Environment, template: str
    ) -> tuple[str, str, Callable[[], bool]]:
        source, filename, uptodate = super().get_source(environment, template)
        real = Path(filename).resolve()
        if not any(real.is_relative_to(Path(folder).resolve()) for folder in self.searchpath):
            raise jinja2.TemplateNotFound(template)
        return source, filename, uptodate


class _CardSandbox(MeteredSandbox):
    """Jinja's sandbox (no ``__class__``/``__globals__`` walks), minus paths and modules: a card
    template formats values, it never touches the file system; its work is bounded (``card.budget``)."""

    def is_safe_attribute(self, obj: object, attr: str, value: object) -> bool:
        if isinstance(obj, PurePath | ModuleType) or isinstance(value, ModuleType):
            return False
        return super().is_safe_attribute(obj, attr, value)


class _CompiledTemplates(jinja2.FileSystemBytecodeCache):
    """Jinja's own bytecode cache, best effort: a cache that cannot be written is one compile more."""

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        with contextlib.suppress(OSError):
            super().dump_bytecode(bucket)


def _bytecode_cache() -> jinja2.BytecodeCache | None:
    """Compiled templates kept between processes: compiling the card's templates (with the budget's
    transform, ``card.budget``) is most of a first render (about 1.2 of 1.3 s on a loaded 2-core
    machine, 0.05 s from the cache). Jinja's per-user folder in the temp directory (created 0700 and
    refused unless the user owns it, ``jinja2/bccache.py:FileSystemBytecodeCache._get_default_cache_dir``);
    each entry is checked against the template's source digest. The file names hold the identity
    of the code that compiled them (hubrelease, Jinja, this module and the budget's transform), so
    another version's entries are never loaded. None: no safe folder, compile every time."""
    identity = hashlib.sha256(f"{__version__}\0{jinja2.__version__}\0".encode())
    try:
        for module in (__file__, budget.__file__):
            identity.update(Path(module).read_bytes())
        return _CompiledTemplates(pattern=f"__hubrelease_{identity.hexdigest()[:20]}_%s.cache")
    except (OSError, RuntimeError):
        return None


@functools.lru_cache(maxsize=16)
def environment(search: tuple[Path, ...]) -> jinja2.Environment:
    """The sandboxed Jinja environment for a template search path, cached: compiling dominates a render.

    ``auto_reload`` (on by default) re-reads a template whose file changed, so the cache is safe;
    compiled templates are kept between processes too (``_bytecode_cache``).
    """
    env = _CardSandbox(
        bytecode_cache=_bytecode_cache(),
        loader=_ConfinedLoader([str(p) for p in search]),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,  # Markdown, not HTML
    )
    env.add_filters(FILTERS)
    return env


def render_template(env: jinja2.Environment, name: str, variables: dict[str, object]) -> str:
    """Render ``name``; template errors become one ``InputError`` with the template file and line."""
    try:
        with metered():  # every printed value is charged to the budget as it is made
            return str(check_size(env.get_template(name).render(variables)))
    except (BudgetExceeded, MemoryError) as exc:
        file, line = _template_location(exc.__traceback__)
        detail = str(exc) if isinstance(exc, BudgetExceeded) else "out of memory"
        raise InputError(
            f"template exceeded the card render budget: {detail}",
            path=_display(file or name),
            line=line,
        ) from None
    except jinja2.TemplateSyntaxError as exc:
        raise InputError(
            f"template syntax: {exc.message}", path=_display(exc.filename or name), line=exc.lineno
        ) from None
    except jinja2.TemplateNotFound as exc:
        file, line = _template_location(exc.__traceback__)
        raise InputError(f"template {exc.name!r} not found", path=_display(file or name), line=line) from None
    except jinja2.UndefinedError as exc:
        file, line = _template_location(exc.__traceback__)
        found = _UNDEFINED_NAME.search(exc.message or "")
        variable = next((g for g in found.groups() if g), "?") if found else "?"
        raise InputError(
            f"undefined variable {variable!r} ({exc.message})", path=_display(file or name), line=line
        ) from None
    except jinja2.exceptions.SecurityError as exc:
        file, line = _template_location(exc.__traceback__)
        raise InputError(
            f"template refused by the sandbox: {exc}", path=_display(file or name), line=line
        ) from None
    except (
        jinja2.TemplateError,
        TypeError,
        ValueError,
        AttributeError,
        LookupError,
        ArithmeticError,  # {{ a / b }} with b == 0 in a user template
        RecursionError,  # a template that includes itself
    ) as exc:
        file, line = _template_location(exc.__traceback__)
        raise InputError(
            f"template failed: {type(exc).__name__}: {exc}", path=_display(file or name), line=line
        ) from None


@dataclass(frozen=True)
class RenderedChart:
    """A chart drawn for the card, at its repo path and on disk."""

    path: str
    """Repo path (beside the card: ``charts/...svg``), as the manifest pins it."""
    file: Path
    title: str
    svg: bytes

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.svg).hexdigest()


@dataclass(frozen=True)
class RenderedCard:
    """A rendered card and where it belongs."""

    text: str
    output: Path
    """Default destination: ``card.output`` inside the release folder."""
    template: str
    charts: tuple[RenderedChart, ...] = ()
    """The card's charts (``card.charts``); the card lists their pins, so they must be pinned first."""
    unpinned: tuple[str, ...] = ()
    """Charts whose size and sha256 the manifest does not pin as drawn (render-card pins them)."""


def _evaluations(manifest: Manifest, release_dir: Path) -> dict[str, Evaluation]:
    # Paths are RepoPath-validated (relative, no ".."); the files are only read, never written.
    return {path: load_evaluation(release_dir / path) for path in manifest.evaluation_paths}


def default_card(manifest: Manifest) -> Card:
    """The card of a manifest without a ``card:`` section."""
    return manifest.card or Card(
        template="dataset_release" if manifest.release.repo_type == "dataset" else "safetensors_drafter"
    )


def render(manifest_path: str | Path, root: Path | None = None, *, charts: bool = True) -> RenderedCard:
    """Render the card of the manifest at ``manifest_path`` (release folder: ``--dir``, ``root:``, its folder).

    ``charts=False`` skips drawing ``card.charts``: the card's text lists the charts' pins, not their
    bytes, so a check of the text alone (verify) need not draw them.
    """
    path = Path(manifest_path)
    manifest = load_manifest(path)
    release_dir = release_root(manifest, path, root)
    card = default_card(manifest)
    output = release_dir / card.output
    if output.resolve() == path.resolve():
        raise ManifestError(
            "is the manifest itself; the card cannot replace it", path=path, field="card.output"
        )
    search, name = _resolve(card, release_dir, path)
    head = front_matter(manifest, path)
    evaluations = _evaluations(manifest, release_dir)
    drawn = _charts(manifest, card, evaluations, release_dir) if charts else ()
    context = build_context(manifest, path, evaluations, card, release_dir)
    check_provenance(manifest, evaluations, path)
    body = render_template(environment(search), name, context.variables())
    # Templates may leave runs of blank lines around skipped blocks; one blank line is canonical.
    body = re.sub(r"[ \t]+\n", "\n", body)
    body = re.sub(r"\n{3,}", "\n\n", body).strip("\n")
    text = f"---\n{head}\n---\n{MARKER}\n\n{body}\n"
    unpinned = tuple(c.path for c in drawn if _pinned(manifest, c.path) != (len(c.svg), c.sha256))
    return RenderedCard(text=text, output=output, template=name, charts=drawn, unpinned=unpinned)


def _pinned(manifest: Manifest, path: str) -> tuple[int | None, str | None] | None:
    artifact = manifest.artifact(path)
    return (artifact.size, artifact.sha256) if artifact is not None else None


def _charts(
    manifest: Manifest, card: Card, evaluations: dict[str, Evaluation], release_dir: Path
) -> tuple[RenderedChart, ...]:
    if not card.charts:
        return ()
    from hubrelease.card.charts import build_charts

    folder = PurePosixPath(card.output).parent
    drawn = []
    for chart in build_charts(evaluations):
        path = str(folder / chart.path)
        drawn.append(RenderedChart(path, release_dir / path, chart.title, chart.svg))
    return tuple(drawn)


def pin_charts(manifest_path: str | Path, rendered: RenderedCard) -> None:
    """Pin each chart as drawn (size, sha256, role doc) in the manifest, so the card lists it."""
    from hubrelease.manifest.editor import ManifestEditor

    editor = ManifestEditor.open(manifest_path)
    for chart in rendered.charts:
        editor.upsert_artifact(
            {
                "path": chart.path,
                "size": len(chart.svg),
                "sha256": chart.sha256,
                "role": "doc",
                "description": chart.title,
            }
        )
    editor.save()


def render_card(manifest_path: str | Path, root: Path | None = None) -> str:
    """The card text for a manifest: same inputs, same bytes."""
    return render(manifest_path, root, charts=False).text


@dataclass(frozen=True)
class CardCheck:
    """The rendered card (and its charts) compared with the files on disk."""

    path: Path
    expected: str
    actual: str | None
    """Text on disk (None: the file does not exist)."""
    rendered: RenderedCard | None = None
    stale_charts: tuple[str, ...] = ()
    """Charts missing on disk, different from a fresh drawing, or not pinned as drawn."""

    @property
    def current(self) -> bool:
        """True when the card and every chart on disk are byte-identical to a fresh render, and pinned."""
        return self.actual == self.expected and not self.stale_charts

    def diff(self) -> str:
        """Unified diff from disk to the fresh render (empty when current)."""
        lines = difflib.unified_diff(
            (self.actual or "").splitlines(keepends=True),
            self.expected.splitlines(keepends=True),
            fromfile=f"{self.path} (on disk)",
            tofile=f"{self.path} (rendered)",
        )
        return "".join(lines)

    def raise_if_stale(self) -> None:
        """Raise ``CheckFailed`` (exit 1) unless the card on disk is current."""
        if self.actual is None:
            raise CheckFailed("card missing; run `hubrelease render-card`", path=self.path)
        if self.actual != self.expected:
            raise CheckFailed("card differs from the manifest; run `hubrelease render-card`", path=self.path)
        if self.stale_charts:
            raise CheckFailed(
                f"chart {self.stale_charts[0]} is missing, differs from a fresh drawing or is not pinned as drawn"
                f"{f' (and {len(self.stale_charts) - 1} more)' if len(self.stale_charts) > 1 else ''}; "
                "run `hubrelease render-card`",
                path=self.path,
            )


def hand_written_status(manifest: Manifest, manifest_path: Path, root: Path | None = None) -> str:
    """``current``, ``stale`` or ``missing``: a hand-written card (``template: none``) against its pins."""
    assert manifest.card is not None and manifest.card.hand_written
    path = release_root(manifest, manifest_path, root) / manifest.card.output
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return "missing"
    card = manifest.card
    same_size = card.size is None or card.size == len(data)
    same_digest = card.sha256 is not None and card.sha256 == hashlib.sha256(data).hexdigest()
    return "current" if same_size and same_digest else "stale"


def check_card(
    manifest_path: str | Path, out: str | Path | None = None, root: Path | None = None
) -> CardCheck:
    """Compare a fresh render with the card on disk (``out``, default ``card.output``). Never writes."""
    rendered = render(manifest_path, root)
    target = Path(out) if out is not None else rendered.output
    try:
        actual: str | None = target.read_bytes().decode("utf-8")
    except FileNotFoundError:
        actual = None
    except UnicodeDecodeError:
        actual = ""
    stale = tuple(
        chart.path
        for chart in rendered.charts
        if chart.path in rendered.unpinned or _read(chart.file) != chart.svg
    )
    return CardCheck(
        path=target, expected=rendered.text, actual=actual, rendered=rendered, stale_charts=stale
    )


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except (FileNotFoundError, IsADirectoryError):
        return None
