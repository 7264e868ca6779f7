# Snakemake `script:` for rule collect: in-process, so a study's list of block summaries never has
# to fit on a command line. Its log gets the outcome, or the error that stopped it.
import json

from hivebench.collect import collect

inputs, out = list(snakemake.input), snakemake.output[0]  # noqa: F821 (injected by Snakemake)
with open(snakemake.log[0], "w") as log:  # noqa: F821
    try:
        table = collect(inputs, out, json.loads(snakemake.params.prices))  # noqa: F821
    except Exception as exc:
        print(f"hivebench collect: error: {exc}", file=log)
        raise
    print(f"{out}: {len(table)} episodes from {len(inputs)} block summaries", file=log)
