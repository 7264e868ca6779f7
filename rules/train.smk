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
        test="results/corpora/{corpus}/test.parquet",
    params:
        teacher=lambda wildcards: json.dumps(teacher_params(wildcards.corpus)),
        seed=lambda wildcards: CORPORA[wildcards.corpus]["seed"],
    conda:
        CONDA_ENV
    log:
        "logs/corpora/{corpus}/labels.log",
    shell:
        "hivebench corpus-label --views {input.views:q} --teacher {params.teacher:q} --seed {params.seed}"
        " --out {output.labels:q} --acceptance {output.acceptance:q} --test {output.test:q} > {log:q} 2>&1"


# Stage two's transitions: each agent's view, the record the runtime admitted and its next view, from a
# study's complete episodes (the warm-start controller's in the paper; train/transitions.py).
rule transitions:
    input:
        transition_jobs,
    output:
        "results/corpora/{corpus}/transitions.parquet",
    params:
        cells=transition_cells,
        drawn=lambda wildcards: CORPORA[wildcards.corpus]["transitions"]["count"],
        seed=lambda wildcards: CORPORA[wildcards.corpus]["seed"],
        held_out=lambda wildcards: CORPORA[wildcards.corpus]["transitions"]["held_out"],
    localrule: True
    conda:
        CONDA_ENV
    log:
        "logs/corpora/{corpus}/transitions.log",
    script:
        "../scripts/transitions.py"


rule distill:
    input:
        labels=lambda wildcards: f"results/corpora/{TRAININGS[wildcards.training]['corpus']}/labels.parquet",
        model=lambda wildcards: student_inputs(wildcards.training),
        warm_start=warm_start_inputs,
    output:
        "models/trained/{training}/seed{seed}/manifest.json",
    params:
        model=lambda wildcards: student_model(wildcards.training),
        settings=distill_settings,
        transitions=lambda wildcards: shlex.join(["--transitions", *warm_start_inputs(wildcards)[1:]])
        if warm_start_inputs(wildcards)
        else "",
        out=lambda wildcards: str(trained_folder(wildcards.training, int(wildcards.seed))),
    threads: lambda wildcards: TRAININGS[wildcards.training]["threads"]
    resources:
        runtime=training_resource("runtime", 24 * 60),
        mem_mb=training_resource("mem_mb", 16000),
        slurm_extra=training_resource("slurm_extra", ""),
    conda:
        CONDA_ENV
    log:
        "logs/trained/{training}/seed{seed}.log",
    shell:
        "hivebench distill --labels {input.labels:q} --model {params.model:q} --settings {params.settings:q}"
        " --training {wildcards.training:q} {params.transitions} --out {params.out:q} > {log:q} 2>&1"


# The corpus's test views relabelled as the runtime may relabel them (orbit partners: channel and claim
# handles through random bijections, incident records reshuffled; the teacher's records through the same
# maps), for stage two's orbit agreement.
rule test_orbit:
    input:
        "results/corpora/{corpus}/test.parquet",
    output:
        "results/corpora/{corpus}/test-orbit.parquet",
    params:
        seed=lambda wildcards: CORPORA[wildcards.corpus]["seed"],
    localrule: True
    conda:
        CONDA_ENV
    log:
        "logs/corpora/{corpus}/test-orbit.log",
    script:
        "../scripts/test_orbit.py"


# The students on the corpus's test views (and, for a stage-two training, on their orbit partners): the
# untrained base model and each training seed's adapter, greedy through the admission ladder (as view
# sets' controllers are), replies through a response cache. They decide with the transformers backend,
# on the CPU (a paper-scale student is slow there).
rule student_decide:
    input:
        views=lambda wildcards: held_out_views(wildcards.training, wildcards.views),
        model=lambda wildcards: METHODS["waggle"].hooks.job_inputs(student_params(wildcards.training, wildcards.student)),
    output:
        "results/trainings/{training}/{student}/{views}.parquet",
    wildcard_constraints:
        student=r"untrained|seed\d+",
        views="test|orbit",
    params:
        method=lambda wildcards: json.dumps(student_params(wildcards.training, wildcards.student)),
        seed=lambda wildcards: CORPORA[TRAININGS[wildcards.training]["corpus"]]["seed"],
    threads: lambda wildcards: TRAININGS[wildcards.training]["threads"]
    resources:
        runtime=240,
        mem_mb=lambda wildcards: student_memory_mb(wildcards.training),
    conda:
        CONDA_ENV
    log:
        "logs/trainings/{training}/{student}/{views}.log",
    shell:
        "hivebench viewset-decide --params {params.method:q} --views {input.views:q} --seed {params.seed}"
        " --out {output:q} > {log:q} 2>&1"


# A stage-two training seed's frozen-probe field loss on the transitions' held-out episodes (train/probe.py).
rule field_probe:
    input:
        manifest="models/trained/{training}/seed{seed}/manifest.json",
        transitions=lambda wildcards: f"results/corpora/{TRAININGS[wildcards.training]['corpus']}/transitions.parquet",
        model=lambda wildcards: student_inputs(wildcards.training),
    output:
        "results/trainings/{training}/seed{seed}/probe.json",
    params:
        model=lambda wildcards: student_model(wildcards.training),
    threads: lambda wildcards: TRAININGS[wildcards.training]["threads"]
    resources:
        runtime=training_resource("runtime", 240),
        mem_mb=training_resource("mem_mb", student_memory_mb),
        slurm_extra=training_resource("slurm_extra", ""),
    conda:
        CONDA_ENV
    log:
        "logs/trainings/{training}/seed{seed}/probe.log",
    shell:
        "hivebench field-probe --manifest {input.manifest:q} --model {params.model:q}"
        " --transitions {input.transitions:q} --out {output:q} > {log:q} 2>&1"


# The training's report: loss curves, the corpus table, the students side by side and, for stage two,
# the structural diagnostics per seed (train/report.py).
rule training_report:
    input:
        manifests=lambda wildcards: training_manifests(wildcards.training),
        acceptance=lambda wildcards: f"results/corpora/{TRAININGS[wildcards.training]['corpus']}/acceptance.csv",
        students=lambda wildcards: list(training_students(wildcards.training).values()),
        test=lambda wildcards: [test_views(wildcards.training)] if tested(wildcards.training) else [],
        diagnostics=lambda wildcards: list(training_diagnostics(wildcards.training).values()),
    output:
        "reports/trainings/{training}/index.html",
    params:
        test=lambda wildcards: f"--test {test_views(wildcards.training)}" if tested(wildcards.training) else "",
        students=lambda wildcards: [f"{name}={path}" for name, path in training_students(wildcards.training).items()],
        diagnostics=lambda wildcards: shlex.join(
            ["--diagnostics", *(f"{k}={v}" for k, v in training_diagnostics(wildcards.training).items())]
        )
        if training_diagnostics(wildcards.training)
        else "",
    localrule: True
    conda:
        CONDA_ENV
    log:
        "logs/trainings/{training}/report.log",
    shell:
        "hivebench training-report --training {wildcards.training:q} --manifests {input.manifests:q}"
        " --acceptance {input.acceptance:q} {params.test} --students {params.students:q} {params.diagnostics}"
        " --out reports/trainings/{wildcards.training:q} > {log:q} 2>&1"


# A factorial's arms side by side (the stage-two trainings that go on from one warm start): the structural
# diagnostics per arm with hierarchical intervals, each arm against Decision only, the paper's Table 16.
rule factorial_report:
    input:
        lambda wildcards: [path for arm in factorial_arms(wildcards.warm) for path in training_diagnostics(arm).values()],
    output:
        "reports/factorials/{warm}/index.html",
    params:
        arms=lambda wildcards: {arm: training_diagnostics(arm) for arm in factorial_arms(wildcards.warm)},
        arm_names=lambda wildcards: {arm: TRAININGS[arm]["arm"] for arm in factorial_arms(wildcards.warm)},
        report=CONFIG["report"],
    localrule: True
    conda:
        CONDA_ENV
    log:
        "logs/factorials/{warm}.log",
    script:
        "../scripts/factorial_report.py"
