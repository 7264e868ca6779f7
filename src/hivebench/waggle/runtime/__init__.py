"""The Waggle runtime, shared by every method on it: the decision record (records.py) and its
validator (admit.py), the trace field (field.py), the candidate-ready gate (gate.py), the formal system
applied around whatever fills the controller slot (formal.py), the six-part local view (view.py), what
a suite's adapter gives it (adapter.py, claims.py) and the round it runs (policy.py). See README.md.

Standard library only here and in hooks.py: method declarations import the hooks at parse time.
"""
