"""hivebench: a Snakemake workbench for decentralised coordination in agent swarms."""

__version__ = "0.1.0"
