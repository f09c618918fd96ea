"""``hubrelease diff``: what changed between two releases (files, pins, architecture, evaluations, licence, signer)."""
