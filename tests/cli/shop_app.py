"""An application module (``--app``): a shop's own tool for runs of kforge's agents. Each call
is written to the file ``SHOP_LEDGER`` names, so a test sees how often it ran."""

from __future__ import annotations

import os

from kforge import Services, tool

__all__ = ["kforge_services", "lookup"]


@tool(read_only=True)
def lookup(item: str) -> str:
    """The price of an item in the shop.

    Args:
        item: What to price.
    """
    with open(os.environ["SHOP_LEDGER"], "a", encoding="utf-8") as ledger:
        ledger.write(item + "\n")
    return f"{item}: 12 euros"


def kforge_services() -> Services:
    return Services(tools=[lookup])
