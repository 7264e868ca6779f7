# Load and validate the config, expand the matrix into job blocks, path helpers.
# Imports hivebench.config / hivebench.cells (standard library, PyYAML, jsonschema), and the suites'
# tasks and text views (numpy) to size local-model jobs; never torch or transformers.

import json
import shlex
import sys
from functools import cache
from pathlib import Path

from snakemake.logging import logger

from hivebench.suite import PluginError

try:  # the registry loads the installed plug-ins: a broken one is named as a config error is, no traceback
    import hivebench.registry
except PluginError as exc:
    raise WorkflowError(str(exc)) from None

from hivebench.waggle.study.plays import block_plays, has_tables
from hivebench.agents.mixed import MIXED
from hivebench.cells import expand_jobs, seed_list
from hivebench.config import (
    ConfigError,
    controller_entry,
    STAGE_TWO,
    corpus_parts,
    filled_method,
    has_test_views,
    load,
    method_entry,
    read_yaml,
    select_methods,
    validate,
    viewset_controllers,
)
from hivebench.damage import study_damage
from hivebench.ids import canonical_json
from hivebench.models.adapter import ADAPTER, EXAMPLE_FORMAT, MANIFEST, trained_folder
from hivebench.models.builtin import BUILTIN, cached_snapshot, is_hub_id
from hivebench.models.builtin import folder as builtin_folder
from hivebench.paths import (
    BLOCK_LOG,
    BLOCK_RECORD,
    BLOCK_SUMMARY,
    CONTRASTS_TABLE,
    EPISODES_TABLE,
    METHOD_FIELD,
    SCORES_TABLE,
    cell_path,
    side_path,
    table_fields,
)
from hivebench.registry import METHODS, SUITE_OBJECTS, SUITE_PACKAGE_OF, task_kind
from hivebench.report import (
    COMMON_FILES,
    CROSS_SECTION_FILES,
    MATRIX_SECTION,
    SECTION_FILE,
    CROSS_SECTION_PACKAGES,
    ROBUSTNESS_SECTION,
    WAGGLE_SECTION,
    caption_file,
    section_cells,
    section_files,
)
from hivebench.view.sample import PAGES_DIR, VEGA_BUNDLE, sampled

DEFAULT_CONFIG = "config/config.yaml"
# The software every rule runs with (`--use-conda` builds it); relative to the rules/ files.
CONDA_ENV = "../environment.yml"


def study_config():
    """(source, validated config). `--config file=my.yaml` and the default are read here, so every
    problem (YAML syntax and repeated keys included) is named with file and line, as `hivebench
    validate` names it. A `--configfile` is read by Snakemake first (a YAML syntax error there gets
    Snakemake's message, which names no file), then again here for keys given twice."""
    if workflow.configfiles:
        for path in workflow.configfiles:
            read_yaml(path)
        return str(workflow.configfiles[-1]), validate(config, str(workflow.configfiles[-1]))
    if set(config) - {"file", "methods"}:
        raise ConfigError(
            "--config",
            ["give the study config as --config file=my.yaml (or --configfile my.yaml), and methods=a,b to run only those"],
        )
    source = str(config.get("file", DEFAULT_CONFIG))
    if "methods" not in config:
        return source, load(source)
    return source, select_methods(load(source), str(config["methods"]).split(","), source)


def as_given_here(path):
    """`path` relative to the working directory where it lies inside it: a study folder copied or
    moved whole keeps the params its jobs ran with (Snakemake reruns a job whose params changed)."""
    resolved = Path(path).resolve()
    return str(resolved.relative_to(Path.cwd())) if resolved.is_relative_to(Path.cwd()) else str(path)


try:
    CONFIG_SOURCE, CONFIG = study_config()
    JOBS = expand_jobs(CONFIG, CONFIG_SOURCE)
except (ConfigError, PluginError) as exc:  # PluginError: a plug-in's schema fragment
    raise WorkflowError(str(exc)) from None

STUDIES = list(JOBS)
JOB_BY_SUMMARY = {job.summary_path: job for jobs in JOBS.values() for job in jobs}

# A finished job whose files cannot be trusted (a cell missing, changed after its job, not a whole
# Parquet file, holding another cell, or found damaged by `hivebench verify`) reruns, and so does a
# study table that is not whole, and a study's episode pages where a page its report links is missing
# (Snakemake sees their directory() output only as a whole): their jobs are forced, as `--forcerun`
# would, and nothing is removed here (a dry run changes nothing). The job redoes exactly the damaged
# cells. `hivebench status` and `hivebench verify` judge with the same study_damage. Only where
# Snakemake plans the jobs: cluster jobs read this file again.
#
# Snakemake offers no public way for a workflow to force jobs: `workflow.dag_settings` (--forcerun) is
# set only after this file is read (Snakemake 9's DAGApi), and the DAG, with its set of forced files,
# is made after that. So the private `Workflow._build_dag` is wrapped, to add them when it is built;
# snakemake is pinned <10 (pyproject.toml, environment.yml), and a Snakemake without that method is
# refused on every run, damage or not, rather than have damage go unredone in the one run that has it.
# tests/test_damage_faults.py checks it in a dry run, a run, under profiles/default, and the refusal.
if not callable(getattr(workflow, "_build_dag", None)):
    from snakemake import __version__ as SNAKEMAKE_VERSION

    raise WorkflowError(
        f"hivebench needs Snakemake 9 (it forces the jobs of damaged results through Workflow._build_dag, "
        f"which Snakemake {SNAKEMAKE_VERSION} lacks): install snakemake>=9,<10"
    )


def force_jobs(outputs):
    """Have Snakemake run the jobs of `outputs` whatever their files' times (see above)."""
    build = workflow._build_dag

    def build_forced(*args, **kwargs):
        workflow.dag.forcefiles.update(outputs)
        return build(*args, **kwargs)

    workflow._build_dag = build_forced


if workflow.is_main_process:
    DAMAGED = {
        output: damage
        for study, jobs in JOBS.items()
        for output, damage in study_damage(study, jobs, pages=bool(CONFIG["report"]["episode_pages"])).items()
    }
    for output, damage in DAMAGED.items():
        for path, problem in damage.items():
            logger.warning(f"hivebench: {path}: {problem}; the job of {output} reruns")
    if DAMAGED:
        force_jobs(DAMAGED)

# Shell commands find the `hivebench` of the environment running Snakemake, which imported it above.
shell.prefix(f"PATH={shlex.quote(str(Path(sys.executable).parent))}:\"$PATH\"; ")

# The suites each study runs, in the order its tasks list them: each gets a section in its report.
STUDY_SUITES = {study: list(dict.fromkeys(job.shared["suite"] for job in jobs)) for study, jobs in JOBS.items()}
SUITES_IN_USE = list(dict.fromkeys(suite for suites in STUDY_SUITES.values() for suite in suites))
# The studies that run a method on the Waggle runtime: their reports get its section too.
WAGGLE_STUDIES = [
    study
    for study, jobs in JOBS.items()
    if any(METHODS[job.shared["method"]["kind"]].impl(job.shared["suite"]).adapted for job in jobs)
]
# The studies where a table of the Waggle matrix's comparisons has a row: their reports get its section.
MATRIX_STUDIES = [
    study for study, jobs in JOBS.items() if has_tables(block_plays(block.shared for job in jobs for block in job.blocks))
]
# The studies with perturbed arms or mixed populations: their reports get the robustness section.
ROBUSTNESS_STUDIES = [
    study
    for study, jobs in JOBS.items()
    if any("perturbation" in job.shared or job.shared["method"]["kind"] == MIXED for job in jobs)
]
CROSS_SECTIONS = {
    WAGGLE_SECTION: WAGGLE_STUDIES,
    MATRIX_SECTION: MATRIX_STUDIES,
    ROBUSTNESS_SECTION: ROBUSTNESS_STUDIES,
}


def study_section_names(study):
    """The sections of a study's report, in order: its suites', then those across its suites it has."""
    return [*STUDY_SUITES[study], *(name for name, studies in CROSS_SECTIONS.items() if study in studies)]


SECTIONS_IN_USE = [*SUITES_IN_USE, *(name for name, studies in CROSS_SECTIONS.items() if studies)]


def suite_report_files(name):
    """A section's files: a suite's, or those of a section across the suites."""
    return section_files(name, CROSS_SECTION_FILES.get(name) or SUITE_OBJECTS[name].report_files)


def study_report_files(study):
    return [*COMMON_FILES, *(file for name in study_section_names(study) for file in suite_report_files(name))]


def study_sections(wildcards):
    return [report_file(wildcards.study, f"{name}/{SECTION_FILE}") for name in study_section_names(wildcards.study)]


# Episode pages: the first `report.episode_pages` seeds of each method x task x N (and replicate) of a
# study, drawn by `hivebench view --folder` into reports/<study>/episodes/ (hivebench.view.sample).
EPISODE_PAGES = CONFIG["report"]["episode_pages"]
STUDY_PAGES = [PAGES_DIR.format(study=study) for study in STUDIES] if EPISODE_PAGES else []
LANDING_PAGE = "reports/index.html"


@cache
def page_cells(study):
    """(cell file, its job's summary) of each episode a study's report draws as a page."""
    job_of = {}
    cells = []
    for job in JOBS[study]:
        for cell in job.cells():
            job_of[cell_path(cell)] = job.summary_path
            cells.append(cell)
    return tuple((cell_path(cell), job_of[cell_path(cell)]) for cell in sampled(cells, EPISODE_PAGES))


def page_cell_files(wildcards):
    return [cell for cell, _ in page_cells(wildcards.study)]


def page_jobs(wildcards):
    """The job summaries of the drawn cells: a job writes its cells before its summary, so the pages
    rerun exactly when their cells' jobs do."""
    return sorted({job for _, job in page_cells(wildcards.study)})


def study_pages(wildcards):
    """The study's pages folder, where it has one: the report page links its pages."""
    return [PAGES_DIR.format(study=wildcards.study)] if EPISODE_PAGES else []


@cache  # asked three times per section while Snakemake plans
def report_cells(study, suite):
    """The cell files a suite's report section reads in a study (Suite.report_cells; the Waggle
    runtime's and the matrix's sections read none)."""
    if suite in CROSS_SECTIONS:
        return ()
    return tuple(section_cells(SUITE_OBJECTS[suite], JOBS[study]))


def listed_cells(wildcards):
    return list(report_cells(wildcards.study, wildcards.suite))


def report_cell_jobs(wildcards):
    """The job summaries of the cells a section reads: a job writes its cells before its summary."""
    wanted = set(listed_cells(wildcards))
    jobs = (job for job in JOBS[wildcards.study] if job.shared["suite"] == wildcards.suite)
    return [job.summary_path for job in jobs if any(cell_path(cell) in wanted for cell in job.cells())]


def section_inputs(suite):
    """The cell files a suite's section reads, as inputs of its rule, once the checkpoint report_cells
    has seen their jobs end (rules/report.smk)."""

    def cells(wildcards):
        found = report_cells(wildcards.study, suite)
        if found:
            checkpoints.report_cells.get(study=wildcards.study, suite=suite)
        return list(found)

    return cells


# Frozen normalisation anchors: the config's own file, else the one beside this workflow.
ANCHORS = (
    str(Path(CONFIG_SOURCE).parent / CONFIG["anchors"])
    if "anchors" in CONFIG
    else str(Path(workflow.basedir) / "config" / "anchors.yaml")
)
# The bootstrap settings every aggregation step passes on, as params (so a change reruns them).
BOOTSTRAP_PARAMS = {
    "resamples": CONFIG["report"]["bootstrap_resamples"],
    "confidence": CONFIG["report"]["confidence"],
    "seed": CONFIG["report"]["bootstrap_seed"],
}


def job_of(wildcards):
    """The job (hivebench.cells.Job) an episode job's wildcards name."""
    return JOB_BY_SUMMARY[BLOCK_SUMMARY.format(**wildcards)]


def job_spec(wildcards):
    """A job's resolved cells as canonical JSON: the only params of an episode job.
    (A function of the wildcards alone: Snakemake leaves params derived from output out of its
    rerun check.)"""
    return canonical_json(job_of(wildcards).spec())


def method_hooks(job):
    return METHODS[job.shared["method"]["kind"]].hooks


def job_inputs(wildcards):
    """Files a job's method reads that a rule makes (an LLM method's converted builtin model folder)."""
    job = job_of(wildcards)
    return method_hooks(job).job_inputs(job.shared["method"]["params"])


def job_resource(name):
    """What an episode job asks the scheduler for: the method's `resources`, else the memory its
    kind estimates for the job (a local model's batches, once its folder is there; the largest of its
    blocks'), else its kind's defaults (an LLM block runs for hours, a classical job for minutes)."""

    def value(wildcards):
        job = job_of(wildcards)
        given = CONFIG["methods"][job.shared["method"]["name"]].get("resources", {})
        if name in given:
            return given[name]
        hooks = method_hooks(job)
        if name == "mem_mb":
            estimates = [hooks.job_memory_mb(block.shared, len(block.seeds)) for block in job.blocks]
            if None not in estimates:
                return max(estimates)
        return hooks.job_resources(job.shared["method"]["params"]).get(name, "")

    return value


# Jobs whose method calls models take minutes where a classical job takes seconds: they start first,
# the longest (by agent-steps, what their calls grow with) before the others, and a model's conversion
# before them all, so that the short jobs fill the cores around them instead of waiting at the end.
FIRST = 2**31


def job_priority(wildcards):
    job = job_of(wildcards)
    if not METHODS[job.shared["method"]["kind"]].impl(job.shared["suite"]).calls_models:
        return 0
    steps = sum(
        task_kind(block.shared["task"]["kind"]).hooks.agent_steps(block.shared["task"]["params"], job.shared["population"])
        for block in job.blocks
    )
    return min(steps * len(job.seeds), FIRST - 1)


def job_threads(wildcards):
    """Cores a job takes (a local model's torch threads)."""
    job = job_of(wildcards)
    return method_hooks(job).threads(job.shared["method"]["params"])


def slot_resource(method_name):
    """The scheduler resource a method's jobs hold one of (an openai method's endpoint slots), or None."""
    method = CONFIG["methods"][method_name]
    return METHODS[method["kind"]].hooks.slot_resource(method_entry(method))


def holds(resource):
    def amount(wildcards):
        return int(slot_resource(job_of(wildcards).shared["method"]["name"]) == resource)

    return amount


# One resource per model endpoint its methods name (an openai method's llm_slots, by default), e.g.
# `snakemake --resources llm_slots=16`.
SLOT_RESOURCES = {name: holds(name) for name in filter(None, map(slot_resource, CONFIG["methods"]))}


def method_prices(wildcards):
    """USD per million tokens for each of a study's methods whose model has a price."""
    prices = CONFIG["prices"]
    methods = {b.shared["method"]["name"]: b.shared["method"]["params"].get("model") for b in JOBS[wildcards.study]}
    return canonical_json({name: prices[model] for name, model in methods.items() if model in prices})


def contrast_spec(wildcards):
    """The study's contrasts (default: every method against the study's first; metrics default to
    the suites' metrics in `hivebench contrasts`)."""
    study = CONFIG["studies"][wildcards.study]
    return canonical_json(study.get("contrasts") or {"reference": study["methods"][0]})


def study_job_summaries(wildcards):
    return [job.summary_path for job in JOBS[wildcards.study]]


def report_file(study, name):
    return f"reports/{study}/{name}"


def report_output(name):
    """A report file as an output; csv tables and png charts also go into `snakemake --report`, with
    the caption beside the code that writes them (hivebench.report.caption_file): a suite's file
    (<suite>/<file>) in its package's captions/, a common one in hivebench/report/captions/."""
    path = report_file("{study}", name)
    stem, suffix = name.rsplit(".", 1)
    if suffix in ("csv", "png"):
        suite, _, file = name.rpartition("/")
        package = {"": "hivebench.report", **CROSS_SECTION_PACKAGES}.get(suite) or SUITE_PACKAGE_OF[suite]
        caption = caption_file(package, file)
        return report(path, caption=str(caption), category="{study}", subcategory=stem)
    return path


# Waggle view sets (rules/viewsets.smk) ------------------------------------------------------------

VIEWSETS = CONFIG["viewsets"]
VIEWSET_DIR = "results/viewsets/{viewset}"
VIEWSET_REPORTS = [f"reports/viewsets/{name}/evaluation.{suffix}" for name in VIEWSETS for suffix in ("csv", "md", "tex")]


def jobs_showing(study, method):
    """The jobs of a study's method: those whose cells showed the views it keeps."""
    return [job for job in JOBS[study] if job.shared["method"]["name"] == method]


def showing_jobs(wildcards):
    """The jobs of the view set's study and method: those whose cells showed the views."""
    viewset = VIEWSETS[wildcards.viewset]
    return jobs_showing(viewset["study"], viewset["method"])


def viewset_jobs(wildcards):
    """The job summaries of the view set's study and method: its cells' views tables lie beside its cells."""
    return [job.summary_path for job in showing_jobs(wildcards)]


def views_tables(jobs):
    """The views tables of the jobs' cells, as viewset.read_views takes them."""
    return [
        {"path": side_path(cell_path(cell), "views"), **table_fields(cell), "seed": cell["seed"]}
        for job in jobs
        for cell in job.cells()
    ]


def viewset_cells(wildcards):
    """The views tables of the view set's study's cells of its method, as viewset.sample takes them."""
    return views_tables(showing_jobs(wildcards))


def controller_params(controller):
    """A view set's controller's parameters (one replicate's, for name@replicate) as a cell would hold
    them (its model file hashed, ...)."""
    hooks = METHODS[CONFIG["methods"][controller.partition("@")[0]]["kind"]].hooks
    return hooks.resolve(controller_entry(CONFIG, controller), Path(CONFIG_SOURCE).parent)


def controller_resource(controller, resource):
    """What a controller's view-set job asks the scheduler for: its method's `resources`, else its kind's."""
    given = CONFIG["methods"][controller.partition("@")[0]].get("resources", {})
    if resource in given:
        return given[resource]
    return METHODS["waggle"].hooks.job_resources(controller_params(controller)).get(resource, "")


def controller_holds(resource):
    return lambda wildcards: int(slot_resource(wildcards.controller.partition("@")[0]) == resource)


def viewset_records(wildcards):
    """Every controller's records on the set, and on its orbit where the set asks for them, by
    (controller, views | orbit)."""
    viewset = VIEWSETS[wildcards.viewset]
    which = ["views", "orbit"] if viewset["orbit"] else ["views"]
    folder = VIEWSET_DIR.format(viewset=wildcards.viewset)
    return {(c, w): f"{folder}/{c}/{w}.parquet" for c in viewset_controllers(CONFIG, viewset) for w in which}


# Training the local law (rules/train.smk) ---------------------------------------------------------

CORPORA = CONFIG["corpora"]
TRAININGS = CONFIG["trainings"]
TRAINED = [
    str(trained_folder(name, seed) / MANIFEST)
    for name, training in TRAININGS.items()
    for seed in seed_list(training["seeds"])
]
TRAINING_REPORTS = [f"reports/trainings/{name}/index.html" for name in TRAININGS]


def corpus_jobs(wildcards):
    """The job summaries of every study and method a corpus draws its views from."""
    parts = corpus_parts(CORPORA[wildcards.corpus])
    return [job.summary_path for _, _, spec in parts for job in jobs_showing(spec["study"], spec["method"])]


def corpus_sources(wildcards):
    """Per part of the corpus (suite, native | synthetic): its sizes and its cells' views tables."""
    return [
        {"suite": suite, "part": part, **spec, "cells": views_tables(jobs_showing(spec["study"], spec["method"]))}
        for suite, part, spec in corpus_parts(CORPORA[wildcards.corpus])
    ]


def teacher_params(corpus):
    """The teacher: "rule", or its waggle method's parameters as a cell would hold them."""
    teacher = CORPORA[corpus]["teacher"]
    return teacher if teacher == "rule" else controller_params(teacher)


def teacher_inputs(wildcards):
    """A model teacher's converted model folder, where a rule of the workflow makes it."""
    params = teacher_params(wildcards.corpus)
    return [] if params == "rule" else METHODS["waggle"].hooks.job_inputs(params)


def student_model(training):
    """The training's base model as its jobs name it: a builtin's converted folder, the config's own
    folder, or a Hugging Face hub id (its snapshot in the local cache)."""
    model = TRAININGS[training]["model"]
    if model in BUILTIN:
        return str(builtin_folder(model))
    given = Path(CONFIG_SOURCE).parent / model
    return str(given) if given.is_dir() or not is_hub_id(model) else model


def student_from_hub(training):
    """Whether the training's base model is a hub id read from the local cache (not a folder here)."""
    model = student_model(training)
    return model == TRAININGS[training]["model"] and is_hub_id(model)


def student_inputs(training):
    """The base model's folder, where it is a file of the workflow's (not a hub id's cached snapshot)."""
    return [] if student_from_hub(training) else [student_model(training)]


def training_manifests(training):
    return [str(trained_folder(training, seed) / MANIFEST) for seed in seed_list(TRAININGS[training]["seeds"])]


def test_views(training):
    return f"results/corpora/{TRAININGS[training]['corpus']}/test.parquet"


def held_out_views(training, views):
    """The corpus's test views (`test`) or their orbit partners (`orbit`)."""
    corpus = TRAININGS[training]["corpus"]
    return f"results/corpora/{corpus}/test.parquet" if views == "test" else f"results/corpora/{corpus}/test-orbit.parquet"


def training_diagnostics(training):
    """A stage-two training's diagnostics inputs by name: the test and orbit views, and per seed its
    records on both and its probe (`seed<k>.test`, `seed<k>.orbit`, `seed<k>.probe`); none for stage one
    or without test views."""
    if "warm_start" not in TRAININGS[training] or not tested(training):
        return {}
    corpus = TRAININGS[training]["corpus"]
    found = {"test": f"results/corpora/{corpus}/test.parquet", "orbit": f"results/corpora/{corpus}/test-orbit.parquet"}
    for seed in seed_list(TRAININGS[training]["seeds"]):
        folder = f"results/trainings/{training}/seed{seed}"
        found |= {f"seed{seed}.test": f"{folder}/test.parquet", f"seed{seed}.orbit": f"{folder}/orbit.parquet"}
        found[f"seed{seed}.probe"] = f"{folder}/probe.json"
    return found


def factorial_arms(warm):
    """The stage-two trainings that go on from `warm`, with diagnostics."""
    return [name for name, t in TRAININGS.items() if t.get("warm_start") == warm and training_diagnostics(name)]



def tested(training):
    """Whether the training's corpus holds test bundles (its students are then decided on them)."""
    return has_test_views(CORPORA[TRAININGS[training]["corpus"]])


def training_students(training):
    """The records of each student on the test views: the untrained model's (a stage-one training's: a
    stage-two arm's base is its warm start's, in that report) and each seed's adapter's."""
    seeds = [f"seed{seed}" for seed in seed_list(TRAININGS[training]["seeds"])]
    names = seeds if "warm_start" in TRAININGS[training] else ["untrained", *seeds]
    return {name: f"results/trainings/{training}/{name}/test.parquet" for name in names} if tested(training) else {}


def student_memory_mb(training):
    """What a student's decisions on the test views ask for: the base model's weight files (its folder,
    or a hub id's cached snapshot) once and a half, and 4 GB for the rest."""
    model = student_model(training)
    folder = cached_snapshot(model) if student_from_hub(training) else Path(model)
    weights = sum(f.stat().st_size for f in folder.glob("*.safetensors")) if folder is not None else 0
    return 4000 + int(1.5 * weights / 2**20)


def training_resource(name, default):
    """What a training's jobs (`distill`, `field_probe`) ask the scheduler for: its `resources`, else
    `default` (a value, or a function of the training's name)."""

    def value(wildcards):
        given = TRAININGS[wildcards.training].get("resources", {})
        if name in given:
            return given[name]
        return default(wildcards.training) if callable(default) else default

    return value


def student_params(training, student):
    """The `waggle` parameters a student decides with: the training's base model (greedy, the training's
    precision and threads), with the adapter of a training seed (`seed<n>`) or none (`untrained`)."""
    settings = TRAININGS[training]
    model = settings["model"] if settings["model"] in BUILTIN else student_model(training)
    entry = {"kind": "waggle", "backend": "transformers", "model": model, "dtype": settings["dtype"]}
    entry["threads"] = settings["threads"]
    if student != "untrained":
        entry |= {"adapter": training, "adapter_seed": int(student.removeprefix("seed"))}
    return METHODS["waggle"].hooks.resolve(filled_method(entry), Path(CONFIG_SOURCE).parent)


def distill_settings(wildcards):
    """The training's settings for `hivebench distill` (its seed the wildcard's), and the version of how
    an example is written (a new one retrains: Snakemake reruns a job whose params changed). A stage-two
    training's warm start is its seed's adapter folder; a stage-one training has no stage-two keys (the
    schema's defaults of them would otherwise rerun it)."""
    training, seed = TRAININGS[wildcards.training], int(wildcards.seed)
    dropped = ("corpus", "model", "seeds", "resources") + (() if "warm_start" in training else STAGE_TWO)
    settings = {k: v for k, v in training.items() if k not in dropped}
    if "warm_start" in training:
        settings["warm_start"] = str(trained_folder(training["warm_start"], seed) / ADAPTER)
    return canonical_json({**settings, "seed": seed, "format": EXAMPLE_FORMAT})


def warm_start_inputs(wildcards):
    """A stage-two training's warm start (its seed's manifest) and transition corpus; none for stage one."""
    training = TRAININGS[wildcards.training]
    if "warm_start" not in training:
        return []
    manifest = str(trained_folder(training["warm_start"], int(wildcards.seed)) / MANIFEST)
    return [manifest, f"results/corpora/{training['corpus']}/transitions.parquet"]


def transition_jobs(wildcards):
    """The job summaries of the study and method a corpus's transitions come from."""
    spec = CORPORA[wildcards.corpus]["transitions"]
    return [job.summary_path for job in jobs_showing(spec["study"], spec["method"])]


def transition_cells(wildcards):
    spec = CORPORA[wildcards.corpus]["transitions"]
    return views_tables(jobs_showing(spec["study"], spec["method"]))

# A factorial page per warm start whose stage-two arms have diagnostics (after every function it calls).
FACTORIAL_REPORTS = [
    f"reports/factorials/{warm}/index.html"
    for warm in dict.fromkeys(t["warm_start"] for t in TRAININGS.values() if "warm_start" in t)
    if factorial_arms(warm)
]
