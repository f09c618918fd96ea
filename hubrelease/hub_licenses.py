"""The Hub's licence ids, so a card's ``license:`` is checked offline.

huggingface_hub's ``ModelCardData`` accepts any string as a licence and only the Hub's
``/api/validate-yaml`` (network) rejects unknown ones, so the list from
https://huggingface.co/docs/hub/repositories-licenses is kept here. Labels are the short forms
cards print ("Apache-2.0", "CC-BY-4.0"); ids without a well-known short form print their full name.
"""

from __future__ import annotations

HUB_LICENSES: dict[str, str] = {
    "apache-2.0": "Apache-2.0",
    "mit": "MIT",
    "openrail": "OpenRAIL",
    "bigscience-openrail-m": "BigScience OpenRAIL-M",
    "creativeml-openrail-m": "CreativeML OpenRAIL-M",
    "bigscience-bloom-rail-1.0": "BigScience BLOOM RAIL 1.0",
    "bigcode-openrail-m": "BigCode Open RAIL-M v1",
    "afl-3.0": "AFL-3.0",
    "artistic-2.0": "Artistic-2.0",
    "bsl-1.0": "BSL-1.0",
    "bsd": "BSD",
    "bsd-2-clause": "BSD-2-Clause",
    "bsd-3-clause": "BSD-3-Clause",
    "bsd-3-clause-clear": "BSD-3-Clause-Clear",
    "c-uda": "Computational Use of Data Agreement",
    "cc": "Creative Commons",
    "cc0-1.0": "CC0-1.0",
    "cc-by-2.0": "CC-BY-2.0",
    "cc-by-2.5": "CC-BY-2.5",
    "cc-by-3.0": "CC-BY-3.0",
    "cc-by-4.0": "CC-BY-4.0",
    "cc-by-sa-3.0": "CC-BY-SA-3.0",
    "cc-by-sa-4.0": "CC-BY-SA-4.0",
    "cc-by-nc-2.0": "CC-BY-NC-2.0",
    "cc-by-nc-3.0": "CC-BY-NC-3.0",
    "cc-by-nc-4.0": "CC-BY-NC-4.0",
    "cc-by-nd-4.0": "CC-BY-ND-4.0",
    "cc-by-nc-nd-3.0": "CC-BY-NC-ND-3.0",
    "cc-by-nc-nd-4.0": "CC-BY-NC-ND-4.0",
    "cc-by-nc-sa-2.0": "CC-BY-NC-SA-2.0",
    "cc-by-nc-sa-3.0": "CC-BY-NC-SA-3.0",
    "cc-by-nc-sa-4.0": "CC-BY-NC-SA-4.0",
    "cdla-sharing-1.0": "CDLA-Sharing-1.0",
    "cdla-permissive-1.0": "CDLA-Permissive-1.0",
    "cdla-permissive-2.0": "CDLA-Permissive-2.0",
    "wtfpl": "WTFPL",
    "ecl-2.0": "ECL-2.0",
    "epl-1.0": "EPL-1.0",
    "epl-2.0": "EPL-2.0",
    "etalab-2.0": "Etalab-2.0",
    "eupl-1.1": "EUPL-1.1",
    "agpl-3.0": "AGPL-3.0",
    "gfdl": "GFDL",
    "gpl": "GPL",
    "gpl-2.0": "GPL-2.0",
    "gpl-3.0": "GPL-3.0",
    "lgpl": "LGPL",
    "lgpl-2.1": "LGPL-2.1",
    "lgpl-3.0": "LGPL-3.0",
    "isc": "ISC",
    "lppl-1.3c": "LPPL-1.3c",
    "ms-pl": "MS-PL",
    "mpl-2.0": "MPL-2.0",
    "odc-by": "ODC-By",
    "odbl": "ODbL",
    "openrail++": "OpenRAIL++-M",
    "osl-3.0": "OSL-3.0",
    "postgresql": "PostgreSQL",
    "ofl-1.1": "OFL-1.1",
    "ncsa": "NCSA",
    "unlicense": "Unlicense",
    "zlib": "Zlib",
    "pddl": "PDDL",
    "lgpl-lr": "LGPL-LR",
    "deepfloyd-if-license": "DeepFloyd IF Research License",
    "llama2": "Llama 2 Community License",
    "llama3": "Llama 3 Community License",
    "llama3.1": "Llama 3.1 Community License",
    "llama3.2": "Llama 3.2 Community License",
    "llama3.3": "Llama 3.3 Community License",
    "gemma": "Gemma Terms of Use",
    "unknown": "unknown",
    "other": "other",
}
"""Hub licence id -> label printed in cards."""


def is_hub_license(license_id: str) -> bool:
    """True if the Hub accepts ``license_id`` in a card's ``license:`` field."""
    return license_id in HUB_LICENSES


def license_label(license_id: str) -> str:
    """Short label for a Hub licence id (unknown ids are returned unchanged)."""
    return HUB_LICENSES.get(license_id, license_id)
