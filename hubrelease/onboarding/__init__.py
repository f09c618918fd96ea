"""Onboarding: describe files you already have (`init`, `add`, `rm`) or a repo already on the Hub (`import`).

Nothing is exported here: each command imports the module it runs.
"""
