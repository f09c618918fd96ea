"""Test data generators, one module per family."""
