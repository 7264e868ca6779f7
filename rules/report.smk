# A study's report: one section per suite it runs (its own job), then the page with the scores and
# contrasts of every suite, which embeds the sections. The csv and png files (with captions from the
# captions/ folder of the package that writes them) also go into `snakemake --report report.html`.
# Every file a section or the page reads is an input of its rule.


# The cell files a suite's section reads (Suite.report_cells: SwarmBench draws its episode frames from
# theirs) are inputs of its rule. No rule makes a cell file (an episode job writes its block's cells
# beside the block summary, its output), so this checkpoint waits for the blocks that hold them and
# lists them; Snakemake then asks the section's inputs again (section_inputs) and finds them there.
checkpoint report_cells:
    input:
        report_cell_jobs,
    output:
        "results/{study}/report_cells/{suite}.txt",
    params:
        cells=listed_cells,
    localrule: True
    conda:
        CONDA_ENV
    log:
        "logs/report/{study}/{suite}.cells.log",
    shell:
        "printf '%s\\n' {params.cells:q} > {output:q} 2> {log:q}"


for suite_name in SECTIONS_IN_USE:

    rule:
        name:
            f"report_{suite_name}"
        localrule: True
        input:
            episodes=EPISODES_TABLE,
            anchors=ANCHORS,
            cells=section_inputs(suite_name),
            bundle=VEGA_BUNDLE,
        output:
            [report_output(name) for name in suite_report_files(suite_name)],
        params:
            suite=suite_name,
            **BOOTSTRAP_PARAMS,
        conda:
            CONDA_ENV
        log:
            f"logs/report/{{study}}/{suite_name}.log",
        shell:
            "hivebench report-section --suite {params.suite} --episodes {input.episodes:q} --anchors {input.anchors:q}"
            " --out reports/{wildcards.study:q}/{params.suite} --vega-bundle {input.bundle:q}"
            " --resamples {params.resamples} --confidence {params.confidence} --bootstrap-seed {params.seed} > {log:q} 2>&1"


# The Vega, Vega-Lite and Vega-Embed JavaScript (bundled by vl-convert, 0.9 MB, about two seconds) once for
# every study's episode pages, which load it, and its report plots, which embed it.
rule vega_bundle:
    output:
        VEGA_BUNDLE,
    localrule: True
    conda:
        CONDA_ENV
    log:
        "logs/report/vega_bundle.log",
    shell:
        "hivebench view --bundle {output:q} > {log:q} 2>&1"


# A page per drawn episode (rules/common.smk, page_cells), and the index the report page links them from.
rule episode_pages:
    input:
        jobs=page_jobs,
        bundle=VEGA_BUNDLE,
    output:
        directory(PAGES_DIR),
    params:
        cells=page_cell_files,
    localrule: True
    conda:
        CONDA_ENV
    log:
        "logs/report/{study}/episodes.log",
    shell:
        "hivebench view --folder {output:q} --bundle {input.bundle:q} {params.cells:q} > {log:q} 2>&1"


rule report:
    input:
        episodes=EPISODES_TABLE,
        scores="results/{study}/scores.parquet",
        contrasts="results/{study}/contrasts.parquet",
        sections=study_sections,
        pages=study_pages,
        bundle=VEGA_BUNDLE,
    output:
        [report_output(name) for name in COMMON_FILES],
    params:
        **BOOTSTRAP_PARAMS,
    conda:
        CONDA_ENV
    log:
        "logs/report/{study}/page.log",
    shell:
        "hivebench report --only-page --episodes {input.episodes:q} --scores {input.scores:q} --contrasts {input.contrasts:q}"
        " --out reports/{wildcards.study:q} --vega-bundle {input.bundle:q} --resamples {params.resamples}"
        " --confidence {params.confidence} --bootstrap-seed {params.seed} > {log:q} 2>&1"


# The run's landing page: every study of the config with what it ran, when, its calls and cost, linked.
rule landing:
    input:
        pages=[report_file(study, "index.html") for study in STUDIES],
        tables=[EPISODES_TABLE.format(study=study) for study in STUDIES],
        trainings=TRAINING_REPORTS,
        factorials=FACTORIAL_REPORTS,
    output:
        LANDING_PAGE,
    params:
        config=as_given_here(CONFIG_SOURCE),
    localrule: True
    conda:
        CONDA_ENV
    log:
        "logs/report/landing.log",
    shell:
        "hivebench report-index {params.config:q} --out {output:q} > {log:q} 2>&1"
