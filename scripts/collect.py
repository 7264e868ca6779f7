# Snakemake `script:` for rule collect: in-process, so a study's list of block summaries never has
# to fit on a command line.
from hivebench.collect import collect

collect(list(snakemake.input), snakemake.output[0])  # noqa: F821 (injected by Snakemake)
