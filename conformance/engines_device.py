"""The llama-servers on a many-core machine: the run step of ``scripts/engines_device.sh``.

A loopback Hub on 127.0.0.1 with the example release and both seed-shaped releases published as the
tests publish them (``tests.factories.published``, ``tests.factories.seed_releases``); ``hubrelease pull``
in process (the machine has our wheels on PYTHONPATH, no console scripts) for each llama-server and
release; each server started with the command pull printed (the seed's own flags, ``--model`` the target
pull paired with). The example's card has no llama.cpp command (SGLang's only), so mainline runs the
tier's own (``consumers.llama_server.run``), then once more with ``-hf TARGET:F16 -hfd DRAFTER:Q8_0``
against the Hub (``MODEL_ENDPOINT``). Each row records ``timings`` as the server answered them
(``draft_n``, ``draft_n_accepted``, speeds); ``engines-device.json`` and ``engines-device.md`` go to ``--out``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from conformance.consumers import llama_server

Row = dict[str, Any]


def _pull(url: str, repo: str, engine: str, target: Path, out: Path) -> tuple[int, dict[str, Any], str]:
    from tests.factories.cli import invoke

    result = invoke(["pull", repo, "--engine", engine, "--target", str(target), "--dir", str(out),
                     "--endpoint", url, "--json"])  # fmt: skip
    return result.exit_code, json.loads(result.stdout) if result.exit_code == 0 else {}, result.stderr.strip()


def _row(engine: str, release: str, how: str, started: float, verdict: dict[str, Any], pulled: str) -> Row:
    return {
        "engine": engine,
        "release": release,
        "how": how,
        "status": verdict["status"],
        "pulled": pulled,
        "timings": verdict.get("timings"),
        "detail": verdict.get("checks") or verdict.get("error"),
        "seconds": round(time.monotonic() - started, 1),
    }


def _pulled_row(
    url: str, servers: dict[str, Path], work: Path, release: str, repo: str, engine: str, target: Path
) -> Row:
    """Pull ``repo`` for ``engine`` paired with ``target``, then start that engine's server on it."""
    started = time.monotonic()
    code, report, err = _pull(url, repo, engine, target, work / "pulled" / release / engine)
    if code != 0:
        status = "n/a" if code == 2 and "publishes no files" in err else "fail"
        return _row(engine, release, "pull", started, {"status": status, "error": err}, "")
    files = [f["path"] for f in report["files"]]
    pulled = f"{', '.join(files)} at {report['commit'][:12]}, each = its pinned sha256, pairing ok"
    flavor = "mainline" if engine == "llama.cpp" else "ik"
    expect = ("DFlash extract_layers",) if flavor == "mainline" else ("DFlash context ready",)
    if not servers[flavor].is_file():
        return _row(
            engine, release, "pull", started, {"status": "not run", "error": f"no {servers[flavor]}"}, pulled
        )
    if report["commands"]:
        argv = report["commands"][0]["argv"]
        extra = llama_server.mainline_cpu_args() if flavor == "mainline" else []
        verdict = llama_server.serve(servers[flavor], [*argv[1:], *extra], " ".join(argv), expect)
        return _row(engine, release, "the command pull printed", started, verdict, pulled)
    draft = next(Path(f["local"]) for f in report["files"] if f["path"].endswith(".gguf"))
    verdict = llama_server.run(flavor, servers[flavor], target, draft, expect)  # type: ignore[arg-type]
    return _row(
        engine, release, "the tier's command (the card has none for this engine)", started, verdict, pulled
    )


def _hf_row(url: str, server: Path, work: Path, target_repo: str, drafter_repo: str) -> Row:
    """Mainline's own downloader against the Hub: ``-hf`` / ``-hfd`` with the published tags."""
    started = time.monotonic()
    if not server.is_file():
        return _row(
            "llama.cpp", "example", "-hf / -hfd", started, {"status": "not run", "error": f"no {server}"}, ""
        )
    env = dict(os.environ, MODEL_ENDPOINT=f"{url}/", LLAMA_CACHE=str(work / "llama-cache"))
    env.pop("HF_TOKEN", None)
    args = ["-hf", f"{target_repo}:F16", "-hfd", f"{drafter_repo}:Q8_0", "--spec-type", "draft-dflash",
            "--spec-draft-n-max", str(llama_server.DRAFT_MAX), "-lv", "4", *llama_server.mainline_cpu_args()]  # fmt: skip
    verdict = llama_server.serve(server, args, " ".join(args[:4]), ("DFlash extract_layers",), env)
    return _row("llama.cpp", "example", "-hf / -hfd from the loopback Hub", started, verdict, "")


def run(servers: dict[str, Path], work: Path) -> list[Row]:
    """Every row: example x {llama.cpp, ik}, seed 001 x ik, seed 000 x llama.cpp (n/a), mainline -hf."""
    from hubrelease_loopback import LoopbackHub
    from tests.factories.published import TARGET_GGUF, publish_example
    from tests.factories.seed_releases import SEED_SHAPED, publish_seed_shaped

    with LoopbackHub(work / "hub") as hub:
        example = publish_example(hub, work / "example")
        seeds = {name: publish_seed_shaped(hub, work / "seeds", name) for name in SEED_SHAPED}
        rows = []
        for engine in ("llama.cpp", "ik"):
            rows.append(_pulled_row(hub.url, servers, work, "example", f"{example.repo}@{example.commit}",
                                    engine, example.target / TARGET_GGUF))  # fmt: skip
        for index, seed in enumerate(seeds.values()):
            engine = "ik" if seed.engine == "ik" else "llama.cpp"
            rows.append(_pulled_row(hub.url, servers, work, f"seed {index:03d}", f"{seed.repo}@{seed.commit}",
                                    engine, seed.target))  # fmt: skip
        rows.append(_hf_row(hub.url, servers["mainline"], work, example.target_repo, example.repo))
    return rows


def _markdown(rows: list[Row], machine: str) -> str:
    lines = [f"machine: {machine}", "", "| engine | release | how | result | draft_n | accepted | tok/s | detail |",
             "|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for r in rows:
        t = r["timings"] or {}
        detail = "; ".join(r["detail"]) if isinstance(r["detail"], list) else str(r["detail"] or "")
        lines.append(f"| {r['engine']} | {r['release']} | {r['how']} | {r['status']} | {t.get('draft_n', '')} | "
                     f"{t.get('draft_n_accepted', '')} | {t.get('predicted_per_second', '')} | {detail[:400].replace('|', '/')} |")  # fmt: skip
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--mainline", type=Path, required=True, help="mainline llama-server")
    parser.add_argument("--ik", type=Path, required=True, help="ik_llama.cpp llama-server")
    parser.add_argument("--out", type=Path, required=True, help="where the results go")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch:
        rows = run({"mainline": args.mainline, "ik": args.ik}, Path(scratch))
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.machine())  # fmt: skip
    machine = f"{cpu}, {os.cpu_count()} cores, Python {sys.version.split()[0]}"
    (args.out / "engines-device.json").write_text(
        json.dumps({"machine": machine, "rows": rows}, indent=2) + "\n"
    )
    (args.out / "engines-device.md").write_text(_markdown(rows, machine))
    print(_markdown(rows, machine))
    return 1 if any(r["status"] == "fail" for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
