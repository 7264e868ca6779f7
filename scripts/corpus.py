# Snakemake `script:` for rule corpus: in-process, so a study's list of cells never has to fit on a
# command line. Its log gets each part's counts, or the error that stopped it.
from hivebench.train.corpus import assemble, native, synthetic
from hivebench.waggle.study.viewset import read_views, write

p = snakemake.params  # noqa: F821 (injected by Snakemake)
with open(snakemake.log[0], "w") as log:  # noqa: F821
    parts = []
    try:
        for source in p.sources:
            views = read_views(source["cells"])
            where = f"{source['suite']} {source['part']} ({source['study']}, {source['method']})"
            if source["part"] == "native":
                parts.append(native(views, source["views"], p.seed))
                print(f"{where}: {len(parts[-1])} of {len(views)} views", file=log)
            else:
                sizes = [source[k] for k in ("bundles", "seeds_per_bundle", "validation", "test")]
                drawn, counts = synthetic(views, *sizes, p.seed)
                parts.append(drawn)
                print(
                    f"{where}: {counts['complete']} of {counts['bundles']} bundles complete, {len(drawn)} views",
                    file=log,
                )
        write(assemble(parts), snakemake.output[0])  # noqa: F821
    except Exception as exc:
        print(f"hivebench corpus: error: {exc}", file=log)
        raise
