"""hubrelease: publish ML model releases to the Hugging Face Hub with integrity you can check.

Layers, left to right (imports only point left): ``manifest`` -> ``hashing`` + ``formats`` ->
``verify`` / ``lint`` -> ``builders`` / ``evaluation`` -> ``card`` -> ``hub`` -> ``cli``.
Only ``cli`` prints or exits.
"""

__version__ = "0.1.0"
