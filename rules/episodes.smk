# One job = one block of cells of the same (study, task, method, population): one process, one
# Parquet file per cell next to the block summary. Cells already on disk with the same hash are kept.

from hivebench.models.builtin import folder


# A builtin model converted once into a folder, which jobs of a method that loads it take as an input
# (its kind's MethodHooks.job_inputs).
rule prepare_model:
    output:
        directory(str(folder("{model}"))),
    priority: FIRST
    resources:
        runtime=30,
        mem_mb=4000,
    conda:
        CONDA_ENV
    log:
        "logs/models/{model}.log",
    shell:
        "hivebench prepare-model {wildcards.model:q} --out {output:q} > {log:q} 2>&1"


rule episodes:
    input:
        block_inputs,
    output:
        BLOCK_SUMMARY,
    params:
        spec=block_spec,
    threads: block_threads
    priority: block_priority
    resources:
        runtime=block_resource("runtime"),
        mem_mb=block_resource("mem_mb"),
        slurm_extra=block_resource("slurm_extra"),
        **SLOT_RESOURCES,
    conda:
        CONDA_ENV
    log:
        stderr=BLOCK_LOG,
        record=BLOCK_RECORD,
    shell:
        "hivebench episodes --spec {params.spec:q} --summary {output:q} --record {log.record:q} 2> {log.stderr:q}"
