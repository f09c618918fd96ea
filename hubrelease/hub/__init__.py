"""Everything that talks to the Hub: client factory, lock, remote verify, push plan and push, loopback server."""
