# Collect a study's block summaries (one row per episode); no trajectory is read.


rule collect:
    input:
        study_block_summaries,
    output:
        "results/{study}/episodes.parquet",
    params:
        prices=method_prices,
    script:
        "../scripts/collect.py"
