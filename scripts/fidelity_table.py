"""Run every Hub operation hubrelease or its users touch against a fresh loopback Hub and write the
fidelity table into docs/how-to/rehearsal-hub.md (run from the repository root; the probes are tests/factories/fidelity.py).

    python scripts/fidelity_table.py           # rewrite the table in the page
    python scripts/fidelity_table.py --check   # exit 1 if the page holds another table

tests/loopback/test_fidelity_table.py runs the same probes and compares, so the table cannot drift.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main(argv: list[str]) -> int:
    readme = ROOT / "docs" / "how-to" / "rehearsal-hub.md"
    with tempfile.TemporaryDirectory(prefix="fidelity-") as work:
        # Before huggingface_hub is imported (it reads these once): no user cache, token or bars.
        os.environ.update(
            HF_HOME=str(Path(work) / "hf-home"),
            HF_HUB_DISABLE_TELEMETRY="1",
            HF_HUB_DISABLE_PROGRESS_BARS="1",
        )
        os.environ.pop("HF_TOKEN", None)
        sys.path.insert(0, str(ROOT))
        from hubrelease.fsutil import atomic_write_text
        from tests.factories.fidelity import markdown, replace_table, run

        table = markdown(run(Path(work)))
    current = readme.read_text(encoding="utf-8")
    wanted = replace_table(current, table)
    if "--check" in argv:
        if wanted != current:
            print(
                "docs/how-to/rehearsal-hub.md's fidelity table differs from a run: run scripts/fidelity_table.py",
                file=sys.stderr,
            )
            return 1
        return 0
    if wanted != current:
        atomic_write_text(readme, wanted)
    print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
