"""Options, environment variables, the kill switch, and the checks of each option."""
