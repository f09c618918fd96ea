"""The release's licence against everything it derives from: targets, base drafters, training data.

Every Hub licence id (huggingface.co/docs/hub/repositories-licenses, ``hubrelease.hub_licenses``) has a class
below, and each class a rule, with the clause it comes from:

- ``permissive`` (apache-2.0, mit, bsd, cc0, cc-by, odc-by...): anything may be built on it, under any
  licence, with attribution where it asks (CC BY 4.0 section 3(a)).
- ``share-alike`` (cc-by-sa, gpl, agpl, gfdl, odbl, cdla-sharing, eupl, osl): adapted material must be
  released under the same licence or a listed compatible one (CC BY-SA 4.0 section 3(b)(1): "the same
  License Element, this version or later, or a BY-SA Compatible License"; GPL-3.0 section 5(c)).
- ``weak-copyleft`` (lgpl, mpl, epl, ms-pl): modified files stay under it (MPL-2.0 section 3.1); the
  release may be licensed otherwise (a warning).
- ``non-commercial`` (cc-by-nc*): the licensed rights are for non-commercial purposes only (CC BY-NC 4.0
  section 2(a)(1)); a release under a licence that allows commercial use conflicts.
- ``no-derivatives`` (cc-by-nd, cc-by-nc-nd): adapted material may not be shared at all (CC BY-ND 4.0
  section 2(a)(1)(B): "produce and reproduce, but not Share, Adapted Material").
- ``use-restricted`` (the OpenRAIL family, Llama, Gemma, DeepFloyd, C-UDA): their use restrictions
  travel with derivatives (OpenRAIL-M paragraph 5 "must include ... use-based restrictions"; Llama 3
  section 1(b)(i)), which no other licence id states: the same licence, or a recorded decision.
- ``undecidable`` (other, unknown): the table cannot say; ``other`` needs ``license_link`` and both need
  ``license_decision``.

Weights (targets, base drafters) derive into the release: a drafter is trained on its target's
features, and a speculators checkpoint may carry the target's embeddings. Whether a model trained on
a dataset is adapted material of it is contested for share-alike and no-derivatives data, so those
are warnings for datasets; non-commercial data restricts the training itself, so it is an error.
Evaluation datasets are not sources.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from hubrelease.hub_licenses import HUB_LICENSES
from hubrelease.lint.findings import RuleFinding, error, warning

if TYPE_CHECKING:
    from hubrelease.manifest.models import Manifest, PinnedDataset, PinnedRepo

LicenseClass = Literal[
    "permissive",
    "share-alike",
    "weak-copyleft",
    "non-commercial",
    "no-derivatives",
    "use-restricted",
    "undecidable",
]

_SHARE_ALIKE = {
    "cc-by-sa-3.0": {"cc-by-sa-3.0", "cc-by-sa-4.0"},  # CC: BY-SA 3.0 adaptations may use 4.0
    "cc-by-sa-4.0": {"cc-by-sa-4.0"},
    "gpl": {"gpl", "gpl-2.0", "gpl-3.0", "agpl-3.0"},
    "gpl-2.0": {"gpl-2.0", "gpl-3.0"},  # "or any later version", the FSF's recommended grant
    "gpl-3.0": {"gpl-3.0", "agpl-3.0"},  # GPL-3.0 section 13
    "agpl-3.0": {"agpl-3.0"},
    "gfdl": {"gfdl"},
    "odbl": {"odbl"},
    "cdla-sharing-1.0": {"cdla-sharing-1.0"},
    "eupl-1.1": {
        "eupl-1.1",
        "gpl-2.0",
        "gpl-3.0",
        "agpl-3.0",
        "mpl-2.0",
        "osl-3.0",
        "epl-1.0",
        "lgpl-2.1",
        "lgpl-3.0",
    },
    "osl-3.0": {"osl-3.0"},
}
"""Share-alike licence -> licences its adapted material may be released under."""
_NON_COMMERCIAL = {
    "cc-by-nc-2.0": "permits",
    "cc-by-nc-3.0": "permits",
    "cc-by-nc-4.0": "permits",
    "cc-by-nc-sa-2.0": "share-alike",
    "cc-by-nc-sa-3.0": "share-alike",
    "cc-by-nc-sa-4.0": "share-alike",
}
_NO_DERIVATIVES = {"cc-by-nd-4.0", "cc-by-nc-nd-3.0", "cc-by-nc-nd-4.0"}
_WEAK = {"lgpl", "lgpl-2.1", "lgpl-3.0", "lgpl-lr", "mpl-2.0", "epl-1.0", "epl-2.0", "ms-pl"}
_USE_RESTRICTED = {
    "openrail",
    "openrail++",
    "bigscience-openrail-m",
    "creativeml-openrail-m",
    "bigscience-bloom-rail-1.0",
    "bigcode-openrail-m",
    "deepfloyd-if-license",
    "llama2",
    "llama3",
    "llama3.1",
    "llama3.2",
    "llama3.3",
    "gemma",
    "c-uda",
}
_UNDECIDABLE = {"other", "unknown", "cc"}  # "cc" names no licence of the family


def license_class(license_id: str) -> LicenseClass:
    """The class of a Hub licence id (an id the Hub does not know is undecidable)."""
    if license_id in _UNDECIDABLE or license_id not in HUB_LICENSES:
        return "undecidable"
    if license_id in _NO_DERIVATIVES:
        return "no-derivatives"
    if license_id in _NON_COMMERCIAL:
        return "non-commercial"
    if license_id in _SHARE_ALIKE:
        return "share-alike"
    if license_id in _WEAK:
        return "weak-copyleft"
    if license_id in _USE_RESTRICTED:
        return "use-restricted"
    return "permissive"


def _allows(source: str, release: str) -> bool | None:
    """Whether adapted material of ``source`` may be released under ``release``; None: undecidable."""
    kind = license_class(source)
    if kind in ("permissive", "weak-copyleft"):
        return True
    if kind == "share-alike":
        return release in _SHARE_ALIKE[source]
    if kind == "non-commercial":
        if _NON_COMMERCIAL[source] == "share-alike":
            return release == source or (release.startswith("cc-by-nc-sa-") and release >= source)
        return release in _NON_COMMERCIAL or release in _NO_DERIVATIVES - {"cc-by-nd-4.0"}
    if kind == "no-derivatives":
        return False
    if kind == "use-restricted":
        return release == source
    return None


def license_findings(manifest: Manifest) -> list[RuleFinding]:
    """Each source's licence against ``release.license``; a conflict names both licences."""
    release = manifest.release.license
    findings: list[RuleFinding] = []
    if license_class(release) == "undecidable" and release != "other":
        findings.append(
            warning("license", f"the release's licence is {release!r}: users cannot tell what they may do")
        )
    sources: list[tuple[str, PinnedRepo | PinnedDataset, bool]] = [
        *(("target", pin, True) for pin in manifest.pins.targets),
        *(("base drafter", pin, True) for pin in manifest.pins.base_drafters),
        *(("dataset", pin, False) for pin in manifest.pins.datasets if pin.role != "evaluation"),
    ]
    for what, pin, weights in sources:
        findings += _pair(release, what, pin, weights)
    return findings


def _pair(release: str, what: str, pin: PinnedRepo | PinnedDataset, weights: bool) -> list[RuleFinding]:
    source = pin.license
    label = f"{what} {pin.repo_id}"
    if source is None:
        return [
            warning(
                "license", f"{label} states no licence: the release's {release} cannot be checked against it"
            )
        ]
    if source == "other" and not pin.license_link:
        return [error("license", f"{label} is licensed 'other' without a license_link to its terms")]
    kind = license_class(source)
    allowed = _allows(source, release)
    if pin.license_decision and allowed is not True:
        return []  # the decision is recorded in the manifest (and the card can cite it)
    if allowed is None:
        return [
            error(
                "license",
                f"{label} is licensed {source!r}, which the licence table cannot weigh against the release's "
                f"{release}: record why the pair is fine in its license_decision",
            )
        ]
    if kind == "weak-copyleft":
        return [
            warning(
                "license", f"{label} is {source} (weak copyleft): files modified from it stay under {source}"
            )
        ]
    if allowed:
        return []
    reason = {
        "share-alike": f"{source} is share-alike: adapted material must be released under "
        f"{' or '.join(sorted(_SHARE_ALIKE.get(source, {source})))}",
        "non-commercial": f"{source} is non-commercial: {release} permits commercial use",
        "no-derivatives": f"{source} forbids sharing adapted material",
        "use-restricted": f"{source} carries use restrictions that {release} does not",
    }[kind]
    message = f"licence conflict: the release's {release} vs {label}'s {source} ({reason})"
    if not weights and kind in ("share-alike", "no-derivatives"):
        # Whether weights trained on data are its adapted material is contested (CC's AI-training FAQ).
        return [
            warning("license", f"{message}; whether trained weights are its adapted material is contested")
        ]
    return [error("license", message)]
