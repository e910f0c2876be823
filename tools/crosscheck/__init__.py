"""The differential harness: our engine against the 18xx.games site's, game by game and state by
state (docs/crosscheck.md)."""
