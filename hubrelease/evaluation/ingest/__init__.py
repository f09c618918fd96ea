"""Readers of benchmark tools' output, one module per tool behind one interface (``interface.Source``);
``sources.SOURCES`` lists them in the order records are tried.

Exports load lazily (``hubrelease.lazy``): ``ServingOptions`` alone does not load every tool's reader.
"""

from typing import TYPE_CHECKING

from hubrelease.lazy import exports

if TYPE_CHECKING:
    from hubrelease.evaluation.ingest.interface import ServingOptions, ServingSource, Source
    from hubrelease.evaluation.ingest.sources import SOURCES, source_of

__all__ = ["SOURCES", "ServingOptions", "ServingSource", "Source", "source_of"]

__getattr__ = exports(
    __name__,
    {
        "ServingOptions": "interface",
        "ServingSource": "interface",
        "Source": "interface",
        "SOURCES": "sources",
        "source_of": "sources",
    },
)
