# Tables and charts of a study, from its episodes table.


rule report:
    input:
        "results/{study}/episodes.parquet",
    output:
        [f"reports/{{study}}/{name}" for name in REPORT_FILES],
    params:
        resamples=CONFIG["report"]["bootstrap_resamples"],
        confidence=CONFIG["report"]["confidence"],
        seed=CONFIG["report"]["bootstrap_seed"],
    shell:
        "{HIVEBENCH} report --episodes {input:q} --out reports/{wildcards.study}"
        " --resamples {params.resamples} --confidence {params.confidence} --bootstrap-seed {params.seed}"
