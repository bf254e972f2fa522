__version__ = "0.1.0"
# The LiteLLM releases this adapter's hooks were read in (docs/litellm.md); 1.107.0 is excluded (reported compromised).
SUPPORTED = "litellm>=1.108,!=1.107.0,<2"
