"""Command-line layer: parses options, calls library functions, formats output. The only layer that exits.

Nothing is exported here: ``cli.app`` registers every command, each importing its library only when run.
"""
