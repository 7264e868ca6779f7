# Snakemake `script:` for rule viewset_sample: in-process, so a study's list of cells never has to fit on
# a command line. Its log gets the outcome, or the error that stopped it.
from hivebench.waggle.study.viewset import orbit_views, sample, write

p, out = snakemake.params, snakemake.output  # noqa: F821 (injected by Snakemake)
with open(snakemake.log[0], "w") as log:  # noqa: F821
    try:
        views = sample(p.cells, p.views, p.seed)
        write(views, out.views)
        write(orbit_views(views, p.seed), out.orbit)
    except Exception as exc:
        print(f"hivebench viewset-sample: error: {exc}", file=log)
        raise
    print(f"{out.views}: {len(views)} views; {out.orbit}: their orbit", file=log)
