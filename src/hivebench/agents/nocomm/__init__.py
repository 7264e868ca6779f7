"""The `nocomm` control: every agent follows its benchmark-native private proposal and sends nothing
("NoComm suppresses explicit outbound inter-agent messages"), on the Waggle runtime.

Standard library only: the Snakefile reads this declaration at parse time.
"""

from hivebench.method import Method, MethodImpl
from hivebench.waggle.runtime.hooks import WaggleHooks

METHOD = Method(
    name="nocomm",
    impl=MethodImpl("hivebench.waggle.runtime.policy:WaggleRuntime", version=3, adapted=True, hooks=WaggleHooks()),
)
