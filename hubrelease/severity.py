"""How much a finding matters: one vocabulary for lint's rule findings and verify's path findings.

``error`` fails the check (exit 1), ``warning`` is reported and the check still passes, ``info`` is a
note (verify's size-only and unchecked files). Lint rules use ``error`` and ``warning`` only; both
``--json`` reports spell ``severity`` with these words (docs/reference/conventions.md, "--json output").
"""

from typing import Literal

Severity = Literal["error", "warning", "info"]
