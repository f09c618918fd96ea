"""Command-line layer: parses options, calls library functions, formats output. The only layer that exits."""
