# Training the local law (config `corpora`, `trainings`; src/hivebench/train/README.md): a corpus's views
# drawn from its studies' episodes (one job, after their blocks), the teacher's labels, and a LoRA adapter
# per training and seed distilled from the accepted records into models/trained/. A killed training
# resumes from its last checkpoint there (only the manifest is the rule's output: the checkpoints stay).


rule corpus:
    input:
        corpus_jobs,
    output:
        "results/corpora/{corpus}/views.parquet",
    params:
        sources=corpus_sources,
        seed=lambda wildcards: CORPORA[wildcards.corpus]["seed"],
    localrule: True
    conda:
        CONDA_ENV
    log:
        "logs/corpora/{corpus}/views.log",
    script:
        "../scripts/corpus.py"


rule corpus_labels:
    input:
        views="results/corpora/{corpus}/views.parquet",
        model=teacher_inputs,
    output:
        labels="results/corpora/{corpus}/labels.parquet",
        acceptance="results/corpora/{corpus}/acceptance.csv",
    params:
        teacher=lambda wildcards: json.dumps(teacher_params(wildcards.corpus)),
        seed=lambda wildcards: CORPORA[wildcards.corpus]["seed"],
    conda:
        CONDA_ENV
    log:
        "logs/corpora/{corpus}/labels.log",
    shell:
        "hivebench corpus-label --views {input.views:q} --teacher {params.teacher:q} --seed {params.seed}"
        " --out {output.labels:q} --acceptance {output.acceptance:q} > {log:q} 2>&1"


rule distill:
    input:
        labels=lambda wildcards: f"results/corpora/{TRAININGS[wildcards.training]['corpus']}/labels.parquet",
        model=lambda wildcards: student_folder(wildcards.training),
    output:
        "models/trained/{training}/seed{seed}/manifest.json",
    params:
        settings=distill_settings,
        out=lambda wildcards: f"models/trained/{wildcards.training}/seed{wildcards.seed}",
    threads: lambda wildcards: TRAININGS[wildcards.training]["threads"]
    resources:
        runtime=24 * 60,
        mem_mb=16000,
    conda:
        CONDA_ENV
    log:
        "logs/trained/{training}/seed{seed}.log",
    shell:
        "hivebench distill --labels {input.labels:q} --model {input.model:q} --settings {params.settings:q}"
        " --training {wildcards.training:q} --out {params.out:q} > {log:q} 2>&1"
