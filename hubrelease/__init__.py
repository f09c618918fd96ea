"""hubrelease: publish ML model releases to the Hugging Face Hub with integrity you can check.

The rooms and their floors (imports point only down) are drawn in docs/architecture.md, checked by the
import contracts in pyproject.toml. Only ``cli`` prints or exits.
"""

__version__ = "0.1.0"
