"""model-signing loaded in a process of its own while ``sign`` checks and hashes a large release.

Why a process: importing model-signing costs about half a second (its package ``__init__`` loads
sigstore, protobuf and requests, whatever the signing method), and an import is Python bytecode
under the GIL: on a thread it would only take turns with the rest of ``sign``. A child process
started as ``sign`` begins imports it while the parent validates, renders and hashes (the hashing
releases the GIL and leaves cores free), then builds the statement, signs it with a key or a
certificate and reads it back (``signed_bundle``, the same function a signature built in process
goes through). For a small release it is slower: the child imports again what the parent already
holds (``sign.WORKER_BYTES`` says where it starts to pay).

The child reads the password of an encrypted key from the environment it inherits, as the
parent would (``signers.PASSWORD_ENV``); nothing secret crosses the pipe. Keyless signing stays in
process: it waits on the network, not on an import.
"""

from __future__ import annotations

import json
import subprocess
import sys
from types import TracebackType
from typing import Any

from hubrelease import errors
from hubrelease.errors import HubReleaseError
from hubrelease.signing.bundle import SignRequest, signed_bundle
from hubrelease.signing.statement import SignedFiles


class SigningWorker:
    """The child process: started at once, asked once (``sign``), stopped on leaving the ``with``."""

    def __init__(self) -> None:
        self._process = subprocess.Popen(
            [sys.executable, "-m", __name__],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )

    def __enter__(self) -> SigningWorker:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._process.poll() is None:
            self._process.kill()
        self._process.communicate()

    def sign(self, request: SignRequest) -> tuple[str, SignedFiles]:
        """The bundle of ``request``'s files and its statement, as ``signed_bundle`` returns them."""
        out, err = self._process.communicate(json.dumps(request.as_json()).encode())
        try:
            answer = json.loads(out)
        except ValueError:
            last = err.decode(errors="replace").strip().splitlines()[-1:] or ["no output"]
            raise RuntimeError(
                f"the signing process ended with exit {self._process.returncode}: {last[0]}"
            ) from None
        if "error" in answer:
            raise _error(answer["error"])
        signed = answer["signed"]
        return answer["bundle"], SignedFiles(**{**signed, "ignore_paths": tuple(signed["ignore_paths"])})


def _error(data: dict[str, Any]) -> BaseException:
    """The parent's exception for the child's: the same class, message and context, or a bug (exit 3)."""
    found = getattr(errors, str(data.get("type")), None)
    if not (isinstance(found, type) and issubclass(found, HubReleaseError)):
        return RuntimeError(str(data["message"]))
    error = found(str(data["message"]), path=data.get("path"), line=data.get("line"), field=data.get("field"))
    error.exit_code = int(data["exit_code"])
    return error


def _serve() -> None:
    """The child: import model-signing first, then answer the one request on stdin."""
    try:
        from hubrelease.signing.extra import required

        with required():
            import model_signing  # noqa: F401  # the import this process exists to do early
    except HubReleaseError as exc:
        failed: HubReleaseError | None = exc
    else:
        failed = None
    request = SignRequest.from_json(json.loads(sys.stdin.buffer.read()))
    try:
        if failed is not None:
            raise failed
        bundle, signed = signed_bundle(request)
        answer: dict[str, Any] = {"bundle": bundle, "signed": signed._asdict()}
    except HubReleaseError as exc:
        kind = (
            type(exc).__name__
            if getattr(errors, type(exc).__name__, None) is type(exc)
            else "HubReleaseError"
        )
        answer = {
            "error": {
                "type": kind,
                "message": exc.message,
                "path": exc.path,
                "line": exc.line,
                "field": exc.field,
                "exit_code": exc.exit_code,
            }
        }
    except Exception as exc:  # a bug or a library failure: the parent raises it as one (exit 3)
        answer = {"error": {"type": "internal", "message": f"{type(exc).__name__}: {exc}"}}
    sys.stdout.write(json.dumps(answer))


if __name__ == "__main__":
    _serve()
