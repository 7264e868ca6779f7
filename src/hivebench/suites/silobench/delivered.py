"""Silo-Bench's receiver-delivered messages per agent, counted one way for every method (the suite's
report section and the Waggle matrix's retention table read it)."""

from __future__ import annotations

import pandas as pd


def delivered_per_agent(episodes: pd.DataFrame) -> pd.Series:
    """Receiver-delivered messages per agent, one figure for every method: a method on the Waggle
    runtime counts frames ("a directed frame jointly carries one compact trace, proposal intent, and one
    task snapshot": what one sender delivers one receiver in a round, its summary's
    `delivered_per_agent`); any other method its task messages received (`deliveries`) over N."""
    own = episodes["deliveries"] / episodes["population"]
    if "delivered_per_agent" not in episodes:
        return own
    return episodes["delivered_per_agent"].astype(float).fillna(own)
