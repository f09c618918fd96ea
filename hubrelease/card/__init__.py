"""Model and dataset cards rendered from the manifest and evaluation files (``render-card``).

``render_card`` gives the text; ``check_card`` compares it with the card on disk (``render-card
--check``; verify and push compare the card with a fresh render through ``verify.expected``).
Exports load lazily (``hubrelease.lazy``), so ``card.marker`` alone does not load jinja2.
"""

from typing import TYPE_CHECKING

from hubrelease.lazy import exports

if TYPE_CHECKING:
    from hubrelease.card.context import CardContext, build_context
    from hubrelease.card.filters import FILTERS
    from hubrelease.card.render import (
        CardCheck,
        RenderedCard,
        builtin_templates,
        check_card,
        environment,
        render_card,
        render_template,
    )

__all__ = [
    "FILTERS",
    "CardCheck",
    "CardContext",
    "RenderedCard",
    "build_context",
    "builtin_templates",
    "check_card",
    "environment",
    "render_card",
    "render_template",
]

__getattr__ = exports(
    __name__,
    {
        "FILTERS": "filters",
        "CardCheck": "render",
        "CardContext": "context",
        "RenderedCard": "render",
        "build_context": "context",
        "builtin_templates": "render",
        "check_card": "render",
        "environment": "render",
        "render_card": "render",
        "render_template": "render",
    },
)
