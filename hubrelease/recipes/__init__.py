"""Recipes that can be re-run: what each builder read (by digest), with which options and tool versions.

``build ... --manifest`` records a recipe beside every output (``recipes.record``); ``hubrelease
rebuild`` re-runs them into a temporary folder and compares the bytes (``recipes.rebuild``). Nothing
is exported here: callers import the module they need.
"""
