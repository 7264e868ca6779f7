# Tables and charts of a study, from its episodes, scores and contrasts tables. The `report()` files
# (with captions from captions/) also go into `snakemake --report report.html`.


def report_output(name):
    path = f"reports/{{study}}/{name}"
    stem, suffix = name.rsplit(".", 1)
    if suffix in ("csv", "png"):
        return report(path, caption=f"captions/{stem}.rst", category="{study}", subcategory=stem)
    return path


rule report:
    input:
        episodes=EPISODES_TABLE,
        scores="results/{study}/scores.parquet",
        contrasts="results/{study}/contrasts.parquet",
    output:
        [report_output(name) for name in REPORT_FILES],
    params:
        **BOOTSTRAP_PARAMS,
    shell:
        "{HIVEBENCH} report --episodes {input.episodes:q} --scores {input.scores:q} --contrasts {input.contrasts:q}"
        " --out reports/{wildcards.study} " + BOOTSTRAP_FLAGS
