"""The `scripted_controller` method: a fixed rule in the controller's slot of the Waggle runtime, reading
only each agent's six-part local view and answering with canonical records
(hivebench.agents.scripted_controller.rule): the view-to-record path with no model, for checks and for the
intervention beside FixedSwarm.

Standard library only: the Snakefile reads this declaration at parse time.
"""

from hivebench.method import Method, MethodImpl
from hivebench.waggle.runtime.hooks import WaggleHooks

METHOD = Method(
    name="scripted_controller",
    impl=MethodImpl(
        "hivebench.agents.scripted_controller.rule:ScriptedController",
        version=2,
        adapted=True,
        classical_messages=True,  # its proposal's, where a record's action sends them
        tables=("traces", "views"),
        hooks=WaggleHooks(),
    ),
    schema="schema.yaml",
)
