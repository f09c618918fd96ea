"""Onboarding: describe files you already have (`init`, `add`, `rm`) or a repo already on the Hub (`import`)."""
