"""Everything that talks to the Hub: client factory, lock, remote verify, push plan and push.

The loopback Hub server is a distribution apart, which none of these modules imports: ``--endpoint local``
finds it through ``hubrelease.local_hub``. The CLI needs only these calls. Exports load lazily (``hubrelease.lazy``): a command that
reads one file's header from the Hub (``hub.remote_headers``) does not load push, lock and the plan.
"""

from typing import TYPE_CHECKING

from hubrelease.lazy import exports

if TYPE_CHECKING:
    from hubrelease.hub.client import hub_api
    from hubrelease.hub.lock import LockResult, lock_manifest
    from hubrelease.hub.plan import PushPlan, build_plan, read_remote
    from hubrelease.hub.publish import PublishOptions, PublishResult
    from hubrelease.hub.push import PushResult, push_release
    from hubrelease.hub.remote_verify import check_pins, verify_remote

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
    "push_release",
    "read_remote",
    "verify_remote",
]

__getattr__ = exports(
    __name__,
    {
        "LockResult": "lock",
        "PublishOptions": "publish",
        "PublishResult": "publish",
        "PushPlan": "plan",
        "PushResult": "push",
        "build_plan": "plan",
        "check_pins": "remote_verify",
        "hub_api": "client",
        "lock_manifest": "lock",
        "push_release": "push",
        "read_remote": "plan",
        "verify_remote": "remote_verify",
    },
)
