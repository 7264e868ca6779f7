"""The `fixedswarm` control: one hand-coded local rule on the Waggle trace field (law.py), its fixed
constants the method's parameters (schema.yaml).

Standard library only: the Snakefile reads this declaration at parse time.
"""

from hivebench.method import Method, MethodImpl
from hivebench.waggle.runtime.hooks import WaggleHooks

METHOD = Method(
    name="fixedswarm",
    impl=MethodImpl(
        "hivebench.agents.fixedswarm.law:FixedSwarm",
        version=3,
        adapted=True,
        classical_messages=True,  # its proposal's, beside its traces
        tables=("traces",),
        hooks=WaggleHooks(),
    ),
    schema="schema.yaml",
)
