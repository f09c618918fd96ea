"""The Xet client's environment for a push: hf_xet's own per-request retries, bounded."""

from __future__ import annotations

import os

# hf_xet's own retries of one request (xet_runtime config group "client"): 5 tries 3 s to 6 min
# apart by default, measured at 232 s to give up on a xorb whose connection drops every time.
XET_RETRY_DEFAULTS = {
    "HF_XET_CLIENT_RETRY_MAX_ATTEMPTS": "3",
    "HF_XET_CLIENT_RETRY_BASE_DELAY": "1s",
    "HF_XET_CLIENT_RETRY_MAX_DURATION": "4s",
}


def bound_xet_retries() -> None:
    """hf_xet's per-request retries, bounded as ``XET_RETRY_DEFAULTS`` unless the user set them.

    Read by hf_xet when huggingface_hub opens its session (the first Xet upload of the process).
    """
    for name, value in XET_RETRY_DEFAULTS.items():
        os.environ.setdefault(name, value)
