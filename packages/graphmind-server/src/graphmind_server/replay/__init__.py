"""`graphmind replay`: run a command with a recorded run replayed (docs/replay.md)."""
