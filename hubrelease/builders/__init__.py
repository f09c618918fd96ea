"""Builders: turn checkpoints and measurements into release artifacts. Nothing is exported here: callers
import the builder they run (``builders.gguf_drafter``, ``builders.evaluation``...)."""
