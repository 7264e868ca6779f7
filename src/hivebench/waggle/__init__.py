"""The Waggle study (seed paper 003): the runtime every controller of the study runs in
(`hivebench.waggle.runtime`: the trace field, the decision record and its validator, the formal system
around the controller slot, the round) and the study's analysis (`hivebench.waggle.study`: view sets,
the report's Waggle and matrix sections). The methods that fill the controller slot are plug-ins like
any other: `hivebench.agents.fixedswarm` (a fixed law), `hivebench.agents.scripted_controller` (a
fixed rule on the view) and `hivebench.agents.waggle` (a model through the admission ladder).

Standard library only: method declarations import `hivebench.waggle.runtime.hooks` at parse time.
"""
