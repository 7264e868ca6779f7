"""The `llm` method: the LLM agent of every suite (agent.py), its parse-time hooks (hooks.py), its
estimate of calls, tokens and memory (estimate.py) and its parameters (schema.yaml).

Standard library only: the Snakefile reads this declaration at parse time.
"""

from hivebench.agents.llm.hooks import LLMHooks
from hivebench.method import Method, MethodImpl

METHOD = Method(
    name="llm",
    impl=MethodImpl(
        "hivebench.agents.llm.agent:LLMAgent", version=4, calls_models=True, reads_text=True, hooks=LLMHooks()
    ),
    schema="schema.yaml",
)
