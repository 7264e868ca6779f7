# Snakemake `script:` for rule collect: in-process, so a study's list of block summaries never has
# to fit on a command line.
import json

from hivebench.collect import collect

collect(list(snakemake.input), snakemake.output[0], json.loads(snakemake.params.prices))  # noqa: F821 (injected by Snakemake)
