"""A loopback Hub-compatible HTTP server that the real huggingface_hub client works against.

127.0.0.1 only, disk-backed (``store.py``), with fault injection (``faults.py``). It speaks git LFS
(``lfs.py``) and Xet (``xet.py``, ``xetstore.py``, ``xetformat.py``), so huggingface_hub works
against it with or without hf_xet. Example::

    with LoopbackHub(tmp_path) as hub:
        api = HfApi(endpoint=hub.url, token="unused")
        api.create_repo("acme/drafter")
        hub.faults.inject("status", method="POST", path="/commit/", status=412)
        hub.faults.rate_limit(route=METADATA_ROUTES, times=2, reset=1)   # 429 on repo_info, tree...
        hub.faults.truncate_siblings(10)     # repo_info lists 10 files; the tree stays complete

Without ``tokens`` every client is anonymous (tests); with them, ``allow_anonymous=False`` refuses
writes without a token (``hub serve``); public repos stay readable without one, as on the Hub,
unless ``anonymous_reads=False``. Gated repos need an accepted access request (``gating.py``). A
token reads the private repos of its scope only (``auth.py``), and a stored object is reachable
only through a repo that holds it (``tenancy.py``).

Large files are served as the Hub serves them: ``resolve`` answers an LFS or Xet file with 302
to a signed URL on a second listener, the storage origin (``cdn_url``, another port on 127.0.0.1:
``storage_port``), as the Hub redirects to its CDN; the client reads the file's metadata off the
302 and fetches the bytes from there without its token.

The failure-mode switches (409, 403, validate-yaml 400 / HTML 502, header echo) are listed in
``faults.py``. ``create_pr`` with ``parent_commit`` opens the PR from that parent (no 412).

The server is ``server.LoopbackHub``; exports load lazily (``hubrelease.lazy``).
"""

from typing import TYPE_CHECKING

from hubrelease.lazy import exports

if TYPE_CHECKING:
    from hubrelease_loopback.server import LoopbackHub
    from hubrelease_loopback.store import HubStore, RepoKey

__all__ = ["HubStore", "LoopbackHub", "RepoKey"]

__getattr__ = exports(__name__, {"LoopbackHub": "server", "HubStore": "store", "RepoKey": "store"})
