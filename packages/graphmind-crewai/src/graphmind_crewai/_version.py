__version__ = "0.1.0"
# The supported range, as in pyproject.toml's dependency (docs/adapters.md, "One spelling").
SUPPORTED = "crewai>=1.15,<1.16"
