"""Everything that talks to the Hub: client factory, lock, remote verify, push plan and push.

The loopback Hub server is a package apart (``hubrelease.loopback``), which none of these modules imports
at module level; the CLI needs only these calls.
"""

from hubrelease.hub.client import hub_api
from hubrelease.hub.lock import LockResult, lock_manifest
from hubrelease.hub.plan import PushPlan, build_plan, read_remote
from hubrelease.hub.preflight import check_pins, preflight
from hubrelease.hub.publish import PublishOptions, PublishResult
from hubrelease.hub.push import PushResult, push_release
from hubrelease.hub.remote_verify import verify_remote

__all__ = [
    "LockResult",
    "PublishOptions",
    "PublishResult",
    "PushPlan",
    "PushResult",
    "build_plan",
    "check_pins",
    "hub_api",
    "lock_manifest",
    "preflight",
    "push_release",
    "read_remote",
    "verify_remote",
]
