"""Where each of the site's numbered share certificates (`KO_0` … `KO_8`) is, in the order the
site's engine keeps them.

The export has to name the certificates a sale sells and the import has to know whether a
bought certificate came from the open market; both depend on how the site moves certificates
when a presidency changes hands (7.5), so one tracker serves both. The site keeps each holder's
certificates in the order they arrived and takes from the front.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

PRESIDENT = 0
SHARES_PER_CORPORATION = 8  # besides the president's certificate
INITIAL_OFFERING = "initial_offering"
OPEN_MARKET = "open_market"


def certificate_name(corporation: str, number: int) -> str:
    return f"{corporation}_{number}"


def certificate_number(name: str) -> tuple[str, int]:
    corporation, _, number = name.rpartition("_")
    return corporation, int(number)


@dataclass
class Certificates:
    initial_offering: dict[str, list[int]] = field(default_factory=dict)
    open_market: dict[str, list[int]] = field(default_factory=lambda: defaultdict(list))
    held: dict[tuple[int, str], list[int]] = field(default_factory=lambda: defaultdict(list))

    def _offering(self, corporation: str) -> list[int]:
        return self.initial_offering.setdefault(
            corporation, list(range(1, SHARES_PER_CORPORATION + 1))
        )

    def _source(self, corporation: str, source: str) -> list[int]:
        if source == OPEN_MARKET:
            return self.open_market[corporation]
        return self._offering(corporation)

    def start(self, seat: int, corporation: str) -> None:
        """The president's certificate goes to the player who starts the corporation."""
        self._offering(corporation)
        self.held[(seat, corporation)].append(PRESIDENT)

    def buy(self, seat: int, corporation: str, source: str) -> str:
        """The first certificate of `source` goes to `seat`; its name."""
        number = self._source(corporation, source).pop(0)
        self.held[(seat, corporation)].append(number)
        return certificate_name(corporation, number)

    def take(self, seat: int, name: str) -> str:
        """The named certificate goes to `seat`; where it was (initial offering or market)."""
        corporation, number = certificate_number(name)
        market = self.open_market[corporation]
        source = OPEN_MARKET if number in market else INITIAL_OFFERING
        pool = self._source(corporation, source)
        if number in pool:
            pool.remove(number)
        self.held[(seat, corporation)].append(number)
        return source

    def bundle(self, seat: int, corporation: str, count: int) -> list[int]:
        """The certificates a sale of `count` shares names: the seller's 10% shares, and the
        president's certificate as well when they do not cover the sale."""
        ordinary = [n for n in self.held[(seat, corporation)] if n != PRESIDENT]
        if count <= len(ordinary):
            return ordinary[:count]
        if count > len(ordinary) + 2:
            raise ValueError(f"seat {seat} holds no {count} {corporation} shares")
        return [*ordinary, PRESIDENT]

    def sell(
        self,
        seat: int,
        corporation: str,
        numbers: list[int],
        count: int,
        new_president: int | None,
    ) -> list[str]:
        """`count` shares sold as the certificates `numbers`. When the sale passes the
        presidency and the president's certificate is among them, the new president's first
        two shares go to the market and the seller takes back from the market's front what
        the sale did not cover; otherwise those two shares go to the seller."""
        held = self.held[(seat, corporation)]
        market = self.open_market[corporation]
        for number in numbers:
            held.remove(number)
            market.append(number)
        if new_president is not None:
            sold_presidency = PRESIDENT in numbers
            self.hand_over(corporation, new_president, market if sold_presidency else held)
            if sold_presidency:
                for _ in range(len(numbers) + 1 - count):  # the president's certificate is 2
                    held.append(market.pop(0))
        return [certificate_name(corporation, n) for n in numbers]

    def swap_presidency(self, corporation: str, new: int, previous: int) -> None:
        """7.5: the new president hands two 10% shares to the previous one."""
        self.hand_over(corporation, new, self.held[(previous, corporation)])

    def hand_over(self, corporation: str, new: int, swapped_to: list[int]) -> None:
        """The new president's first two shares go to `swapped_to`; the president's
        certificate, wherever it is, to the new president."""
        new_held = self.held[(new, corporation)]
        swapped_to.extend(new_held[:2])
        del new_held[:2]
        holdings = [h for (_, c), h in self.held.items() if c == corporation]
        for holding in (*holdings, self.open_market[corporation]):
            if PRESIDENT in holding and holding is not new_held:
                holding.remove(PRESIDENT)
        new_held.append(PRESIDENT)
