"""The shared kernel: pure values every layer may use (a refusal and its reason). Nothing here
does I/O, reads a clock or draws randomness; the pure cores may import this package and no other
of ours below them (the `pure-cores` contract in pyproject.toml)."""
