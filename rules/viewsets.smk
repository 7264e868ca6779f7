# Waggle view sets (config `viewsets`): views drawn from a study's episodes of a method on the view
# runtime, and their orbit (one job, after that study's blocks of the method); each controller's
# records on both (a job per controller and set, its replies through a response cache beside them);
# the scores (src/hivebench/waggle/study/viewset.py).

rule viewset_sample:
    input:
        viewset_jobs,
    output:
        views="results/viewsets/{viewset}/views.parquet",
        orbit="results/viewsets/{viewset}/orbit.parquet",
    params:
        cells=viewset_cells,
        views=lambda wildcards: VIEWSETS[wildcards.viewset]["views"],
        seed=lambda wildcards: VIEWSETS[wildcards.viewset]["seed"],
    localrule: True
    conda:
        CONDA_ENV
    log:
        "logs/viewsets/{viewset}/sample.log",
    script:
        "../scripts/viewset_sample.py"


rule viewset_decide:
    input:
        views="results/viewsets/{viewset}/{which}.parquet",
        model=lambda wildcards: METHODS["waggle"].hooks.job_inputs(controller_params(wildcards.controller)),
    output:
        "results/viewsets/{viewset}/{controller}/{which}.parquet",
    wildcard_constraints:
        which="views|orbit",
    params:
        method=lambda wildcards: json.dumps(controller_params(wildcards.controller)),
        seed=lambda wildcards: VIEWSETS[wildcards.viewset]["seed"],
    threads: lambda wildcards: METHODS["waggle"].hooks.threads(controller_params(wildcards.controller))
    resources:
        runtime=lambda wildcards: controller_resource(wildcards.controller, "runtime"),
        mem_mb=lambda wildcards: controller_resource(wildcards.controller, "mem_mb"),
        slurm_extra=lambda wildcards: controller_resource(wildcards.controller, "slurm_extra"),
        **{name: controller_holds(name) for name in SLOT_RESOURCES},
    conda:
        CONDA_ENV
    log:
        "logs/viewsets/{viewset}/{controller}/{which}.log",
    shell:
        "hivebench viewset-decide --params {params.method:q} --views {input.views:q} --seed {params.seed}"
        " --out {output:q} > {log:q} 2>&1"


rule viewset_report:
    input:
        views="results/viewsets/{viewset}/views.parquet",
        orbit="results/viewsets/{viewset}/orbit.parquet",
        records=lambda wildcards: list(viewset_records(wildcards).values()),
    output:
        [f"reports/viewsets/{{viewset}}/evaluation.{suffix}" for suffix in ("csv", "md", "tex")],
    params:
        records=lambda wildcards: [f"{c}={path}" for (c, which), path in viewset_records(wildcards).items() if which == "views"],
        orbits=lambda wildcards: [f"{c}={path}" for (c, which), path in viewset_records(wildcards).items() if which == "orbit"],
        reference=lambda wildcards: (
            f"--reference {VIEWSETS[wildcards.viewset]['reference']}" if "reference" in VIEWSETS[wildcards.viewset] else ""
        ),
    localrule: True
    conda:
        CONDA_ENV
    log:
        "logs/viewsets/{viewset}/report.log",
    shell:
        "hivebench viewset-report --views {input.views:q} --orbit-views {input.orbit:q} --records {params.records:q}"
        " --orbit-records {params.orbits:q} {params.reference} --out reports/viewsets/{wildcards.viewset:q} > {log:q} 2>&1"
