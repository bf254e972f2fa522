"""Runs: run contexts, run events, model-step identity, tool-call ids."""
