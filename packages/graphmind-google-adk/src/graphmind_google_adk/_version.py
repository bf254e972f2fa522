__version__ = "0.1.0"
# The google-adk releases this plugin's callbacks were read in (docs/google-adk.md), as in pyproject.toml.
SUPPORTED = "google-adk>=2.12,<3"
