# Tables and charts of a study, from its episodes, scores and contrasts tables. The `report()` files
# (with captions from captions/) also go into `snakemake --report report.html`.


rule report:
    input:
        episodes=EPISODES_TABLE,
        scores="results/{study}/scores.parquet",
        contrasts="results/{study}/contrasts.parquet",
    output:
        [report_output(name) for name in REPORT_FILES],
    params:
        **BOOTSTRAP_PARAMS,
    log:
        "logs/report/{study}.log",
    shell:
        "hivebench report --episodes {input.episodes:q} --scores {input.scores:q} --contrasts {input.contrasts:q}"
        " --out reports/{wildcards.study:q} --resamples {params.resamples} --confidence {params.confidence}"
        " --bootstrap-seed {params.seed} > {log:q} 2>&1"
