"""Context X-ray: what fills a model call's window, token by token (docs/context.md)."""
