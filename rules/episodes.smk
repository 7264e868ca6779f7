# One job = one block of cells of the same (study, task, method, replicate, population), or, for a
# method that calls no model, the blocks of up to `tasks_per_job` tasks (hivebench.cells.Job): one
# process, one Parquet file per cell, and the job's summary. Cells already on disk with the same hash
# are kept.

from hivebench.models.builtin import folder


# A builtin model converted once into a folder, which jobs of a method that loads it take as an input
# (its kind's MethodHooks.job_inputs).
rule prepare_model:
    output:
        directory(str(folder("{model}"))),
    wildcard_constraints:
        model=r"[^/]+",  # a builtin's folder, never a file under models/trained/
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
        job_inputs,
    output:
        BLOCK_SUMMARY,
    params:
        spec=job_spec,
    threads: job_threads
    priority: job_priority
    resources:
        runtime=job_resource("runtime"),
        mem_mb=job_resource("mem_mb"),
        slurm_extra=job_resource("slurm_extra"),
        **SLOT_RESOURCES,
    conda:
        CONDA_ENV
    log:
        stderr=BLOCK_LOG,
        record=BLOCK_RECORD,
    shell:
        "hivebench episodes --spec {params.spec:q} --summary {output:q} --record {log.record:q} 2> {log.stderr:q}"
