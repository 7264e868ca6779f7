# Collect a study's block summaries (one row per episode); no trajectory is read.


rule collect:
    input:
        study_job_summaries,
    output:
        EPISODES_TABLE,
    params:
        prices=method_prices,
    conda:
        CONDA_ENV
    log:
        "logs/collect/{study}.log",
    script:
        "../scripts/collect.py"


# Scores (each metric's mean and interval per method, task and population) and paired contrasts.


rule scores:
    input:
        episodes=EPISODES_TABLE,
        anchors=ANCHORS,
    output:
        SCORES_TABLE,
    params:
        **BOOTSTRAP_PARAMS,
    conda:
        CONDA_ENV
    log:
        "logs/scores/{study}.log",
    shell:
        "hivebench scores --episodes {input.episodes:q} --anchors {input.anchors:q} --out {output:q}"
        " --resamples {params.resamples} --confidence {params.confidence} --bootstrap-seed {params.seed} > {log:q} 2>&1"


rule contrasts:
    input:
        episodes=EPISODES_TABLE,
        anchors=ANCHORS,
    output:
        CONTRASTS_TABLE,
    params:
        spec=contrast_spec,
        **BOOTSTRAP_PARAMS,
    conda:
        CONDA_ENV
    log:
        "logs/contrasts/{study}.log",
    shell:
        "hivebench contrasts --episodes {input.episodes:q} --anchors {input.anchors:q} --spec {params.spec:q}"
        " --out {output:q}"
        " --resamples {params.resamples} --confidence {params.confidence} --bootstrap-seed {params.seed} > {log:q} 2>&1"
