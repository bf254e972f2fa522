__version__ = "0.1.0"
# The google-genai releases this adapter's hooks were read in (docs/google-genai.md): 2.34 is the
# workspace's (Google ADK pulls it), 3.6 the newest, run by `nox -s google_genai`.
SUPPORTED = "google-genai>=2.34,<4"
