"""NativeMsg: the private proposal, and the task-native message the local rule sends with it."""

from __future__ import annotations

from hivebench.waggle.runtime.policy import Context, WaggleRuntime
from hivebench.waggle.runtime.records import Decisions


class NativeMsg(WaggleRuntime):
    medium = "native"

    def law(self, context: Context) -> Decisions:
        decisions = Decisions.private(context.proposal.action)
        decisions.response = context.proposal.message
        return decisions
