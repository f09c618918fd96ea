"""A card template renders within a work budget; exceeding it is exit 2 naming the template.

Each template below ran the CI gate (``render-card --check``) out of memory (exit 3) or for minutes
before the budget. The outcome is asserted, and the work done (steps and volume the meter counted),
never the time it took.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hubrelease.card import budget
from tests.factories.cli import run_cli
from tests.factories.releases import write_release

BOMBS = {
    "repeat": "{{ 'x' * 100000 * 100000 }}",
    "repeat_to_disk": "{{ 'x' * 10**8 }}",
    "power": "{{ 9 ** (9 ** 9) }}",
    "nested_range": "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
    "lipsum": "{{ lipsum(10**6) }}",
    "doubling": (
        "{% set ns = namespace(s='x') %}{% for i in range(64) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}"
        "{{ ns.s | length }}"
    ),
    "center": "{{ 'x' | center(10**10) }}",
    "method_width": "{{ 'x'.ljust(10**10) }}",
    "percent_width": "{{ '%*d' % (10**10, 1) }}",
    "format_width": "{{ '{:>10000000000}'.format(1) }}",
    "format_filter": "{{ '%10000000000d' | format(1) }}",
    "replace": "{{ ('x' * 100000).replace('', 'y' * 1000) }}",
    "join": (
        "{% set ns = namespace(l=[]) %}{% set s = 'x' * 1000000 %}"
        "{% for i in range(1000) %}{% set _ = ns.l.append(s) %}{% endfor %}{{ ns.l | join }}"
    ),
    "macro_tree": (
        "{% macro f(n) %}{% if n %}{{ f(n - 1) }}{{ f(n - 1) }}{% endif %}{% endmacro %}{{ f(40) }}"
    ),
    "recursive_loop": (
        "{% for x in [1] recursive %}{% if loop.depth < 4 %}{{ loop(range(100000)) }}{% endif %}{% endfor %}"
    ),
    "sum_in_loop": "{% for i in range(100000) %}{{ range(100000) | sum }}{% endfor %}",
    "list_doubling": (
        "{% set ns = namespace(l=[1]) %}{% for i in range(64) %}{% set ns.l = ns.l + ns.l %}{% endfor %}"
    ),
    "block_set": (
        "{% set big %}{% for i in range(100000) %}{{ 'y' * 10000 }}{% endfor %}{% endset %}{{ big | length }}"
    ),
}


def _release(tmp_path: Path, template: str) -> Path:
    manifest = write_release(
        tmp_path / "rel", {"model.safetensors": b"w"}, extra_manifest={"card": {"template": "card.md.j2"}}
    )
    (manifest.parent / "card.md.j2").write_text(template, encoding="utf-8")
    return manifest


@pytest.mark.parametrize("name", sorted(BOMBS))
def test_a_template_past_the_budget_is_exit_2_naming_the_template(
    tmp_path: Path, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The CI gate's command: ``render-card --check``."""
    manifest = _release(tmp_path, BOMBS[name])
    meters: list[budget._Meter] = []

    class Recorded(budget._Meter):
        def __init__(self) -> None:
            super().__init__()
            meters.append(self)

    monkeypatch.setattr(budget, "_Meter", Recorded)
    code, _, stderr = run_cli("render-card", "--check", manifest)
    assert code == 2, (name, stderr)
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and "card.md.j2:1: template exceeded the card render budget" in lines[0], lines
    (meter,) = meters  # the work stopped at the budget
    assert meter.steps <= budget.MAX_STEPS + budget.CALL_STEPS + 100
    assert meter.volume <= budget.MAX_VOLUME + budget.MAX_VALUE * budget.ITEM_UNITS


def test_render_card_past_the_budget_writes_nothing(tmp_path: Path) -> None:
    manifest = _release(tmp_path, "# card\n\n" + BOMBS["repeat_to_disk"])
    code, _, stderr = run_cli("render-card", manifest)
    assert code == 2 and "card.md.j2:3: template exceeded" in stderr
    assert not (manifest.parent / "README.md").exists()


def test_the_budget_leaves_ordinary_template_code_alone(tmp_path: Path) -> None:
    template = (
        "{% set ns = namespace(total=0) %}{% for i in range(1000) %}{% set ns.total = ns.total + i %}"
        "{% endfor %}{{ ns.total }} {{ 2 ** 64 }} {{ '%5.1f' % 3.14159 }} {{ '{:>6}'.format('ab') }} "
        "{{ 'x' * 3 }}{{ ['a', 'b'] | join(', ') }} {{ 'ab' | center(6) }}|{{ lipsum(1, false, 5, 6) | length > 0 }}"
        "{% macro m(x) %}[{{ x }}]{% endmacro %}{{ m(1) }}{% for x in [[1, [2]]] recursive %}"
        "{% if x is iterable %}{{ loop(x) }}{% else %}{{ x }}{% endif %}{% endfor %} {{ 17179869184 | bytes }}"
    )
    manifest = _release(tmp_path, template)
    code, _, stderr = run_cli("render-card", manifest)
    assert code == 0, stderr
    body = (manifest.parent / "README.md").read_text(encoding="utf-8")
    assert "499500 18446744073709551616   3.1     ab xxxa, b   ab  |True[1]12 17.2 GB" in body
