"""The 1889 rules as pure functions: decide(state, command) -> events, evolve(state, event)."""
