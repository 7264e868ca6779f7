"""The `nocomm` control: every agent follows its benchmark-native private proposal and sends nothing
("NoComm suppresses explicit outbound inter-agent messages"), on the Waggle runtime.

Standard library only: the Snakefile reads this declaration at parse time.
"""

from hivebench.agents.waggle import WaggleHooks
from hivebench.method import Method, MethodImpl

METHOD = Method(
    name="nocomm",
    impl=MethodImpl("hivebench.agents.waggle.runtime:WaggleRuntime", version=2, adapted=True, hooks=WaggleHooks()),
)
