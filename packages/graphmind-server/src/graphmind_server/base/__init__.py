"""Leaf helpers every part of the hub uses: its one JSON spelling and its private files."""
