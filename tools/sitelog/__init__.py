"""Games exported from the 18xx.games site: reading them, translating their actions into our
commands, replaying them (through the gateway or in-process) and exporting ours back."""
