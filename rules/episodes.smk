# One job = one block of cells of the same (study, task, method, population): one process, one
# Parquet file per cell next to the block summary. Cells already on disk with the same hash are kept.


rule episodes:
    output:
        BLOCK_SUMMARY,
    params:
        spec=block_spec,
    log:
        "logs/" + BLOCK_SUMMARY.removeprefix("results/").removesuffix(".parquet") + ".log",
    shell:
        "{HIVEBENCH} episodes --spec {params.spec:q} --summary {output:q} 2> {log:q}"
