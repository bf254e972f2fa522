"""The loop guard: fingerprints, the "in a row" count, lines of execution."""
