"""The routes process's settings, read once at its start (infra.settings)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from infra.process_settings import Listening, ProcessSettings
from infra.settings import block, setting, whole
from services.routes.shell.pool import PoolSettings


@dataclass(frozen=True, slots=True)
class RoutesSettings:
    NAME: ClassVar[str] = "routes"

    process: ProcessSettings = block(ProcessSettings)
    listening: Listening = block(Listening)
    workers: int | None = setting(
        "SHIKOKU_ROUTES_WORKERS",
        None,
        whole(least=1),
        "worker processes of the solver pool, one search each at a time",
        shown="the CPUs the process may run on (its affinity)",
    )
    queue: int | None = setting(
        "SHIKOKU_ROUTES_QUEUE",
        None,
        whole(least=0),
        "searches that may wait for a worker beyond those running (one more is refused "
        "SOLVER_BUSY)",
        shown="twice the workers",
    )

    @property
    def pool(self) -> PoolSettings:
        return PoolSettings.chosen(self.workers, self.queue)

    @property
    def listen_address(self) -> str:
        return self.listening.address(self.NAME, self.process.addresses)

    def problems(self) -> list[str]:
        return self.process.token_problems() + self.listening.ambiguity(
            self.NAME, self.process.addresses
        )
