"""The `nativemsg` control: every agent follows its private proposal and sends the task-native messages
its local rule sends, over the task's own contacts ("NativeMsg exchanges transient task-native messages
over the same local contacts, without a separate persistent semantic field, quorum, or commitment
mechanism"), on the Waggle runtime.

Standard library only: the Snakefile reads this declaration at parse time.
"""

from hivebench.method import Method, MethodImpl
from hivebench.waggle.runtime.hooks import WaggleHooks

METHOD = Method(
    name="nativemsg",
    impl=MethodImpl(
        "hivebench.agents.nativemsg.policy:NativeMsg",
        version=3,
        adapted=True,
        classical_messages=True,  # its proposal's: the suite's algorithm's messages
        hooks=WaggleHooks(),
    ),
)
