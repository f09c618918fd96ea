"""Builders: turn checkpoints and measurements into release artifacts."""
