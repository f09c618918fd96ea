"""Model and dataset cards rendered from the manifest and evaluation files (``render-card``).

``render_card`` gives the text; ``check_card`` compares it with the card on disk (``render-card
--check``; verify and push compare the card with a fresh render through ``verify.expected``).
"""

from hubrelease.card.context import CardContext, build_context
from hubrelease.card.filters import FILTERS
from hubrelease.card.render import (
    CardCheck,
    RenderedCard,
    builtin_templates,
    check_card,
    environment,
    render,
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
    "render",
    "render_card",
    "render_template",
]
