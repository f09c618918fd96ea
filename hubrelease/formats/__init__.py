"""Model file formats read from their headers only: GGUF (``gguf_header``, ``ggml_types``), safetensors
(``safetensors_header``), and what a DFlash / speculators drafter is (``dflash``, ``dflash_shapes``,
``speculators``). Nothing is exported here: callers import the reader they need, so importing one
format does not load the others (``hubrelease inspect`` reads one file).
"""
