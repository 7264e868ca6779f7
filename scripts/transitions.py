# Snakemake `script:` for rule transitions: in-process, so a study's list of cells never has to fit on a
# command line. Its log gets the counts, or the error that stopped it.
from hivebench.train.transitions import transitions
from hivebench.waggle.study.viewset import read_views, write

p = snakemake.params  # noqa: F821 (injected by Snakemake)
with open(snakemake.log[0], "w") as log:  # noqa: F821
    try:
        views = read_views(p.cells)
        drawn = transitions(views, p.drawn, p.seed, p.held_out)
        write(drawn, snakemake.output[0])  # noqa: F821
        for split, rows in drawn.groupby("split"):
            print(f"{split}: {len(rows)} transitions ({int(rows['eventful'].sum())} eventful)", file=log)
        print(f"of {len(views)} views", file=log)
    except Exception as exc:
        print(f"hivebench transitions: error: {exc}", file=log)
        raise
