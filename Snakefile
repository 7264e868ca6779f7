# hivebench workflow: config -> cells -> episode blocks -> episodes.parquet -> report.
# Kept thin and light: every job (on SLURM, every node) re-parses it. See rules/common.smk.

include: "rules/common.smk"


wildcard_constraints:
    study=r"[^/]+",
    suite=r"[^/]+",
    task=r"[^/]+",
    viewset=r"[^/]+",
    corpus=r"[^/]+",
    training=r"[^/]+",
    seed=r"\d+",
    controller=r"[^/]+",
    method=METHOD_FIELD,
    population=r"\d+",
    first=r"\d+",
    last=r"\d+",


include: "rules/episodes.smk"
include: "rules/aggregate.smk"
include: "rules/report.smk"
include: "rules/viewsets.smk"
include: "rules/train.smk"


# Cheap aggregation runs where Snakemake runs (on SLURM: not worth a job's ~6 s start-up); the
# report sections say so themselves (rules/report.smk).
localrules:
    all,
    collect,
    scores,
    contrasts,
    report,


# Every block summary and every study's episode pages folder is a target too: one that is missing (a
# file deleted by hand) is redone even where the reports are up to date, and everything after it
# follows (as after damage: rules/common.smk, which also redoes a page missing inside the folder).
rule all:
    default_target: True
    input:
        [report_file(study, name) for study in STUDIES for name in study_report_files(study)],
        LANDING_PAGE,
        list(JOB_BY_SUMMARY),
        STUDY_PAGES,
        VIEWSET_REPORTS,
        TRAINED,
        TRAINING_REPORTS,
        FACTORIAL_REPORTS,


import time

RUN_STARTED = []  # when this run's onstart ran: its onerror names the stops of this run's jobs alone


# Runs you pay for (docs/spend.md): as a run starts, its budgets, prices and rate limits are written
# beside the ledger for every job to read, and a run whose episode jobs' estimate passes what is left of
# a budget does not start; a run that stops because jobs met a budget says so, and how to go on.
onstart:
    from hivebench.spend.run import OverEstimate, begin

    RUN_STARTED.append(time.time())
    running = {str(job.output[0]) for job in workflow.dag.needrun_jobs() if job.rule.name == "episodes"}
    try:
        for line in begin(CONFIG, {s: [j for j in jobs if j.summary_path in running] for s, jobs in JOBS.items()}):
            logger.info(line)
    except OverEstimate as exc:
        raise WorkflowError(str(exc)) from None


onerror:
    from hivebench.spend.run import stop_note

    note = stop_note(JOBS, RUN_STARTED[0] if RUN_STARTED else 0.0)
    if note:
        logger.error(note)
