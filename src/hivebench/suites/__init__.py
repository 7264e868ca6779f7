"""The benchmark suites: one package each, registered in hivebench.registry.SUITES."""
