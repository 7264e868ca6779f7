"""The `hivebench` command: validate a config, list its cells, run episodes, render reports."""

from __future__ import annotations

import argparse
import datetime
import json
import logging
import os
import signal
import socket
import sys
import time
from importlib import import_module
from pathlib import Path
from typing import Any

from hivebench import __version__
from hivebench.anchors import AnchorError
from hivebench.config import ConfigError, load
from hivebench.models import BackendError
from hivebench.report import MATRIX_SECTION, ROBUSTNESS_SECTION, WAGGLE_SECTION
from hivebench.suite import PluginError, TaskParamError
from hivebench.view import EpisodeError

DEFAULT_CONFIG = "config/config.yaml"
DEFAULT_ANCHORS = "config/anchors.yaml"
BUDGET_EXIT = 75  # EX_TEMPFAIL: a job stopped at a budget; it goes on once the budget is raised


def _blocks(args: argparse.Namespace) -> tuple[dict[str, Any], dict[str, list[Any]]]:
    from hivebench.cells import expand_jobs

    config = load(args.config)
    blocks = expand_jobs(config, args.config)
    if getattr(args, "study", None):
        if args.study not in blocks:
            raise ConfigError(args.config, [f"studies: no study named {args.study!r} (defined: {', '.join(blocks)})"])
        blocks = {args.study: blocks[args.study]}
    return config, blocks


def cmd_validate(args: argparse.Namespace) -> int:
    _, blocks = _blocks(args)
    for study, study_blocks in blocks.items():
        cells = sum(len(b.seeds) * len(b.blocks) for b in study_blocks)
        print(f"{args.config}: study {study!r}: {cells} cells in {len(study_blocks)} jobs")
    print(f"{args.config}: valid")
    return 0


def cmd_schema(args: argparse.Namespace) -> int:
    from hivebench.config import schema

    print(json.dumps(schema(), indent=1))
    return 0


def cmd_cells(args: argparse.Namespace) -> int:
    from hivebench.ids import canonical_json, digest
    from hivebench.paths import cell_path

    _, blocks = _blocks(args)
    for study_blocks in blocks.values():
        for block in study_blocks:
            for cell in block.cells():
                if args.json:
                    print(canonical_json(cell))
                else:
                    print(
                        digest(cell),
                        cell["study"],
                        cell["task"]["name"],
                        cell["method"]["name"],
                        f"n={cell['population']}",
                        f"seed={cell['seed']}",
                        cell_path(cell),
                        sep="\t",
                    )
    return 0


def _cell_from_flags(args: argparse.Namespace) -> dict[str, Any]:
    from hivebench.cells import make_cell, resolved_methods, resolved_task, shared_part
    from hivebench.registry import task_kind, task_suite

    missing = [flag for flag in ("task", "method", "population", "seed") if getattr(args, flag) is None]
    if missing:
        raise SystemExit(f"hivebench episode: give --cell FILE, or all of --{', --'.join(missing)}")
    config = load(args.config)
    base = Path(args.config).parent
    for kind, name in (("tasks", args.task), ("methods", args.method)):
        if name not in config[kind]:
            raise ConfigError(args.config, [f"{kind}: no entry named {name!r} (defined: {', '.join(config[kind])})"])
    task = resolved_task(config, args.task, base)
    problems = list(task_kind(task["kind"]).hooks.population_problems(task["params"], args.population))
    if problems:
        raise ConfigError(args.config, [f"--population {args.population}: {p} (task {args.task!r})" for p in problems])
    suite = task_suite(task["kind"])
    replicates = dict(resolved_methods(config, args.method, suite, base))
    if args.replicate not in replicates:
        shown = ", ".join(map(str, replicates)) if None not in replicates else "none"
        raise SystemExit(
            f"hivebench episode: --replicate {args.replicate}: method {args.method!r} has replicates: {shown}"
        )
    shared = shared_part(args.study, task, replicates[args.replicate], args.population, args.replicate)
    return make_cell(shared, args.seed)


def cmd_episode(args: argparse.Namespace) -> int:
    from hivebench.cells import check_cell
    from hivebench.engine.writer import write_episode
    from hivebench.paths import cell_path

    if args.cell:
        text = sys.stdin.read() if args.cell == "-" else Path(args.cell).read_text()
        cell = check_cell(json.loads(text))
    else:
        cell = _cell_from_flags(args)
    out = args.out or cell_path(cell)
    summary = write_episode(cell, out)
    shown = {k: v for k, v in summary.items() if k != "conflicts"}
    print(json.dumps({"out": str(out), **shown}))
    return 0


def cmd_episodes(args: argparse.Namespace) -> int:
    from hivebench.cells import block_specs, job_cells
    from hivebench.engine.jobs import run_job
    from hivebench.spend.ledger import BudgetReached
    from hivebench.spend.meter import Meter, Settings, metering
    from hivebench.store import write_json

    spec = json.loads(args.spec)
    # The job's record: `hivebench status` tells failed and killed jobs from it, not from the log.
    run = {"summary": args.summary, "host": socket.gethostname(), "pid": os.getpid(), "started": _now()}

    def record(state: str, **fields: Any) -> None:
        if args.record:
            write_json({**run, "state": state, **fields}, args.record)

    record("running")
    # A job cancelled by Snakemake or SLURM gets SIGTERM: record it as failed rather than vanish.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))
    started = time.perf_counter()
    first = block_specs(spec)[0]
    try:
        with metering(Meter(first["study"], first["method"]["name"], Settings.read())) as meter:
            computed = run_job(spec, args.summary)
    except BudgetReached as reached:
        # Not a failure: the cells it could not finish are unfinished, their paid calls in the cache.
        record("stopped", exit=BUDGET_EXIT, error=str(reached), finished=_now())
        meter.progress.show()
        print(f"{args.summary}: stopped: {reached}", file=sys.stderr)
        return BUDGET_EXIT
    except BaseException as exc:
        record("failed", exit=exit_status(exc), error=error_line(exc), finished=_now())
        raise
    if meter.progress.calls:
        meter.progress.show()
    ran = job_cells(spec)
    record("done", exit=0, **ran, computed=computed, finished=_now())
    seconds = time.perf_counter() - started
    print(
        f"{args.summary}: {computed} of {len(ran['hashes'])} cells computed, "
        f"{len(ran['hashes']) - computed} already done ({seconds:.2f} s)",
        file=sys.stderr,
    )
    return 0


def cmd_estimate(args: argparse.Namespace) -> int:
    from hivebench.estimate import estimate, table, totals
    from hivebench.spend.run import budget_lines

    config, blocks = _blocks(args)
    rows = estimate([block for study_jobs in blocks.values() for job in study_jobs for block in job.blocks])
    if not rows:
        print(f"{args.config}: no LLM methods in the selected studies: no model calls")
    else:
        print(table(rows, config["prices"]))
        print()
        print(totals(rows, config["prices"]))
    lines, _ = budget_lines(config, blocks)
    if lines:
        print()
        print("\n".join(lines))
    if config["corpora"]:
        from hivebench.train.estimate import estimates
        from hivebench.train.estimate import table as training_table

        by_study = {study: [b for job in jobs for b in job.blocks] for study, jobs in blocks.items()}
        print()
        print(training_table(*estimates(config, by_study)))
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    from hivebench.spend.ledger import SPEND_DIR, by_method, read_ledger
    from hivebench.spend.run import budget_lines
    from hivebench.status import lock_note, spend_table, status, table

    config, blocks = _blocks(args)
    report = status(blocks, config["prices"], pages=bool(config["report"]["episode_pages"]))
    lock = lock_note()
    spend = by_method(read_ledger(SPEND_DIR / "ledger.json")["spent"])
    budgets, _ = budget_lines(config, blocks)
    if args.json:
        shown = {"cells": report.rows, "spend": spend, "budgets": budgets, "problems": report.problems, "lock": lock}
        print(json.dumps(shown, indent=1))
        return 0
    print(table(report.rows, "tsv" if args.tsv else "plain"))
    if spend and not args.tsv:
        print(f"\nspent on calls to model servers (the ledger, {SPEND_DIR}/ledger.json; unfinished cells' calls too):")
        print(spend_table(spend))
    notes = [*budgets, *report.problems, *([lock] if lock else [])]
    for note in notes:  # scripts reading the TSV get them on standard error
        print(note, file=sys.stderr if args.tsv else sys.stdout)
    return 0


def cmd_counterfactual(args: argparse.Namespace) -> int:
    import pyarrow.parquet as pq

    from hivebench.cells import resolved_methods
    from hivebench.counterfactual import (
        CounterfactualError,
        forecast,
        own_cache,
        recorded_replies,
        replay,
        swapped_cell,
    )
    from hivebench.paths import calls_path, cell_path
    from hivebench.spend.meter import Meter, metering
    from hivebench.spend.run import settings_of
    from hivebench.store import CELL_KEY

    if not Path(args.cell).is_file():
        raise CounterfactualError(f"{args.cell}: no such episode file")
    metadata = pq.read_schema(args.cell).metadata or {}
    if CELL_KEY not in metadata:
        raise CounterfactualError(f"{args.cell}: not a hivebench episode file (no cell in its metadata)")
    cell = json.loads(metadata[CELL_KEY])
    config = load(args.config or DEFAULT_CONFIG)
    swaps = {}
    for swap in args.swap:
        agents, _, name = swap.partition("=")
        if name not in config["methods"] or not all(a.strip().isdigit() for a in agents.split(",")):
            raise CounterfactualError(f"--swap {swap}: give AGENTS=METHOD, a method of the config (e.g. 0,3=soft_fp)")
        method = resolved_methods(config, name, cell["suite"], Path(args.config or DEFAULT_CONFIG).parent)[0][1]
        swaps.update({int(agent): method for agent in agents.split(",")})
    swapped = swapped_cell(cell, swaps)
    cache = Path(calls_path(cell))
    if not cache.exists():
        raise CounterfactualError(f"{cache}: no response cache beside the cell (run from the workflow's folder)")
    # After an earlier replay, its own cache holds the calls it made too: forecast over it.
    replayed = Path(own_cache(swapped))
    expected = forecast(swapped, replayed if replayed.exists() else cache, recorded_replies(cell, cache))
    print(
        f"{cell_path(swapped)}: forecast {expected.new_calls} new calls (if each new reply acts as its agent's "
        f"original did), at most {expected.at_most}"
    )
    if args.forecast:
        return 0
    with metering(Meter(cell["study"], swapped["method"]["name"], settings_of(config))):  # this config's budgets
        _, made = replay(swapped, cache)
    print(f"{cell_path(swapped)}: {made} new calls made")
    return 0


def cmd_verify(args: argparse.Namespace) -> int:
    from hivebench.damage import pages_folder_damage
    from hivebench.status import running_snakemake
    from hivebench.verify import verify_job, verify_tables

    if runs := running_snakemake():
        # Its jobs write results and job records: what is read now may be half old, half new.
        print(
            f"hivebench verify: error: a Snakemake run is in progress in this directory (process "
            f"{', '.join(map(str, runs))}): verify once it has finished",
            file=sys.stderr,
        )
        return 2
    config, blocks = _blocks(args)
    finished = [b for study_blocks in blocks.values() for b in study_blocks if Path(b.summary_path).exists()]
    found = {}  # a block summary or study table -> the damage its job redoes
    rewritten = []  # outputs their job wrote again while verify read them: not judged
    for block in finished:
        damage, current = verify_job(block)
        if not current:
            rewritten.append(block.summary_path)
        elif damage:
            found[block.summary_path] = damage
    for study in blocks:
        damage, changed = verify_tables(study)
        rewritten += changed
        found.update({table: {table: problem} for table, problem in damage.items() if table not in changed})
        if config["report"]["episode_pages"]:  # each run sees them too
            found.update(pages_folder_damage(study))
    for damage in found.values():
        print("\n".join(f"{path}: {problem}" for path, problem in damage.items()))
    for path in rewritten:
        print(f"{path}: written again while verify read it: not judged (run `hivebench verify` again)")
    cells = sum(len(b.seeds) for b in finished)
    print(
        f"{args.config}: read {cells} cells of {len(finished)} finished jobs and the study tables back in full: ",
        end="",
    )
    outcome = [
        *([f"{len(found)} jobs have damage; `snakemake` redoes exactly the damaged files"] if found else []),
        *([f"{len(rewritten)} outputs were written again meanwhile"] if rewritten else []),
    ]
    print("; ".join(outcome) or "no damage")
    return 1 if outcome else 0


def cmd_prepare_model(args: argparse.Namespace) -> int:
    from hivebench.models.builtin import BUILTIN, folder, prepare

    if args.name not in BUILTIN:
        raise ConfigError("prepare-model", [f"{args.name!r} is not a builtin model ({', '.join(BUILTIN)})"])
    print(prepare(args.name, Path(args.out) if args.out else folder(args.name)))
    return 0


def cmd_scores(args: argparse.Namespace) -> int:
    import pandas as pd

    from hivebench.anchors import load_anchors
    from hivebench.scores import score_table
    from hivebench.store import write_table

    episodes = pd.read_parquet(args.episodes)
    table = score_table(
        episodes, args.resamples, args.confidence, args.bootstrap_seed, load_anchors(args.anchors), args.interval
    )
    write_table(table, args.out)
    print(f"{args.out}: {len(table)} scores")
    return 0


def cmd_contrasts(args: argparse.Namespace) -> int:
    import pandas as pd

    from hivebench.anchors import load_anchors
    from hivebench.contrasts import contrast_table
    from hivebench.registry import SUITE_METRICS, SUITE_OBJECTS
    from hivebench.store import write_table

    spec = json.loads(args.spec)
    episodes = pd.read_parquet(args.episodes)
    metrics = spec.get("metrics") or list(
        dict.fromkeys(m.name for suite in pd.unique(episodes["suite"]) for m in SUITE_METRICS[suite] if m.paired)
    )
    try:
        anchors = load_anchors(args.anchors)
        table = contrast_table(
            episodes, spec, metrics, args.resamples, args.confidence, args.bootstrap_seed, SUITE_OBJECTS, anchors
        )
    except ValueError as exc:
        print(f"hivebench contrasts: error: {exc}", file=sys.stderr)
        return 2
    write_table(table, args.out)
    dropped = table.loc[table.population == "all", ["a", "b", "metric", "dropped_units"]]
    for row in dropped[dropped.dropped_units > 0].itertuples():
        print(
            f"{args.out}: {row.a} - {row.b} ({row.metric}): {row.dropped_units} unmatched units dropped",
            file=sys.stderr,
        )
    print(f"{args.out}: {len(table)} contrasts")
    return 0


def render_section(episodes: Any, suite: str, folder: Path, args: argparse.Namespace) -> Path:
    """Write one suite's report section (or the Waggle runtime's: `waggle`) into `folder`
    (reports/<study>/<suite>) from a study's episodes."""
    from hivebench.anchors import load_anchors, load_published
    from hivebench.registry import SUITE_OBJECTS
    from hivebench.report import SECTION_FILE, Section
    from hivebench.suite import load

    folder.mkdir(parents=True, exist_ok=True)
    if suite == WAGGLE_SECTION:  # the Waggle runtime's section, across the suites it runs
        from hivebench.waggle.study.report import on_runtime, render

        mine = on_runtime(episodes)
    elif suite == MATRIX_SECTION:  # the Waggle matrix's comparisons, over every method
        from hivebench.waggle.study.matrix import render

        mine = episodes
    elif suite == ROBUSTNESS_SECTION:  # perturbed arms against their methods, over every suite
        from hivebench.perturb.report import render

        mine = episodes
    else:
        render = load(SUITE_OBJECTS[suite].report)
        mine = episodes[episodes["suite"] == suite].reset_index(drop=True)
    anchors = args.anchors or (DEFAULT_ANCHORS if Path(DEFAULT_ANCHORS).is_file() else None)
    figures = WAGGLE_SECTION if suite == MATRIX_SECTION else suite  # both sections show the Waggle paper's
    published, frozen = (load_published(anchors, figures), load_anchors(anchors)) if anchors else ({}, {})
    bootstrap = (args.resamples, args.confidence, args.bootstrap_seed)
    part = render(Section(mine, folder, f"{suite}/", *bootstrap, published, frozen))
    (folder / SECTION_FILE).write_text(part, encoding="utf-8")
    return folder


def take_vega_bundle(args: argparse.Namespace) -> None:
    if args.vega_bundle:
        from hivebench.view.bundle import use_vega_bundle

        use_vega_bundle(args.vega_bundle)


def cmd_report_section(args: argparse.Namespace) -> int:
    import pandas as pd

    take_vega_bundle(args)
    episodes = pd.read_parquet(args.episodes)
    print(render_section(episodes, args.suite, Path(args.out), args))
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    import pandas as pd

    from hivebench.report.page import render_page

    take_vega_bundle(args)
    results = Path(args.episodes).parent
    episodes = pd.read_parquet(args.episodes)
    scores = pd.read_parquet(args.scores or results / "scores.parquet")
    contrasts = pd.read_parquet(args.contrasts or results / "contrasts.parquet")
    out = Path(args.out)
    from hivebench.perturb.report import perturbed
    from hivebench.waggle.study.plays import episode_plays, has_tables
    from hivebench.waggle.study.report import on_runtime

    suites = list(pd.unique(episodes["suite"]))
    if len(on_runtime(episodes)):
        suites.append(WAGGLE_SECTION)
    if has_tables(episode_plays(episodes)):
        suites.append(MATRIX_SECTION)
    if perturbed(episodes):
        suites.append(ROBUSTNESS_SECTION)
    if not args.only_page:
        for suite in suites:
            print(render_section(episodes, suite, out / suite, args))
    study = str(episodes["study"].iloc[0])
    print(render_page(study, scores, contrasts, suites, out, args.confidence))
    return 0


def cmd_report_index(args: argparse.Namespace) -> int:
    from hivebench.report.landing import render_landing

    print(render_landing(load(args.config), args.config, args.out))
    return 0


def cmd_view(args: argparse.Namespace) -> int:
    from hivebench.view.episode import load, page_path
    from hivebench.view.folder import write_bundle, write_pages
    from hivebench.view.page import render

    if args.folder:
        bundle = args.bundle or write_bundle(Path(args.folder) / "vega.js")
        pages = write_pages(args.cells, args.folder, bundle)
        print(f"{len(pages)} episode pages in {args.folder}, loading {bundle}")
        return 0
    if args.bundle:
        if args.cells:
            raise EpisodeError("--bundle without --folder writes the bundle alone: give no cells")
        print(write_bundle(args.bundle))
        return 0
    if not args.cells:
        raise EpisodeError("no cell to draw: give a cell file")
    if len(args.cells) > 1 and args.out:
        raise EpisodeError("--out names one page: give one cell, or --folder for several")
    for target in args.cells:
        episode = load(target)
        print(render(episode, args.out or page_path(episode.path)))
    return 0


def _controller_key(out: Path) -> str:
    """The config key of a view-set controller's model, read from its records' path as the workflow
    writes it (results/viewsets/<set>/<controller>/<views|orbit>.parquet: rules/viewsets.smk)."""
    by_workflow = out.parent.parent.parent.name == "viewsets"
    return f"methods.{out.parent.name}.model" if by_workflow else "--params model"


def cmd_viewset_decide(args: argparse.Namespace) -> int:
    import pandas as pd

    from hivebench.models.scripted import RepliesError
    from hivebench.spend.meter import Meter, Settings, metering
    from hivebench.waggle.study.viewset import decide, write

    out = Path(args.out)
    try:
        # A view set's calls count in the ledger (and against the run's budget) as `@viewsets` (no study's
        # name: a name starts with a letter or digit), by view set and controller.
        with metering(Meter("@viewsets", f"{out.parent.parent.name}/{out.parent.name}", Settings.read())):
            records = decide(
                pd.read_parquet(args.views), json.loads(args.params), out.with_suffix(".calls.jsonl"), args.seed
            )
    except RepliesError as exc:  # a scripted file too short: named by its controller's config key too
        raise RepliesError(f"{_controller_key(out)}: {exc}") from None
    write(records, out)
    counts = records["rung"].value_counts().to_dict()
    print(f"{out}: {len(records)} records ({', '.join(f'{k} {v}' for k, v in counts.items())})")
    return 0


def cmd_corpus_label(args: argparse.Namespace) -> int:
    import pandas as pd

    from hivebench.spend.meter import Meter, Settings, metering
    from hivebench.train.label import RULE, acceptance, model_labels, rule_labels
    from hivebench.waggle.study.viewset import write

    views = pd.read_parquet(args.views)
    teacher = json.loads(args.teacher)
    out = Path(args.out)
    if teacher == RULE:
        labels = rule_labels(views)
    else:  # a teacher's calls count in the ledger (and against the run's budget) as `@corpora`, by corpus
        with metering(Meter("@corpora", out.parent.name, Settings.read())):
            labels = model_labels(views, teacher, out.with_suffix(".calls.jsonl"), args.seed)
    write(labels, out)
    write(labels[(labels["split"] == "test") & labels["accepted"]], args.test)
    acceptance(labels).to_csv(args.acceptance, index=False)
    print(f"{out}: {int(labels['accepted'].sum())} of {len(labels)} records accepted")
    return 0


def cmd_distill(args: argparse.Namespace) -> int:
    import pandas as pd
    from transformers import AutoTokenizer

    from hivebench.ids import digest
    from hivebench.models.open import local_path
    from hivebench.train.distill import Settings, train
    from hivebench.train.examples import encode, pad_id

    labels = pd.read_parquet(args.labels)
    accepted = labels[labels["accepted"]]
    base = local_path(args.model)
    tokenizer = AutoTokenizer.from_pretrained(base)
    pad = pad_id(tokenizer)

    def decisions(split: str) -> list[tuple[Any, Any, Any]]:
        rows = accepted[accepted["split"] == split]
        return [tuple(map(json.loads, r)) for r in zip(rows["view"], rows["actions"], rows["record"])]

    sources = decisions("train")
    train_set = [encode(tokenizer, *d) for d in sources]
    validation = [encode(tokenizer, *d) for d in decisions("validation")]
    if not train_set or not validation:
        print(
            f"hivebench distill: error: {args.labels}: {len(train_set)} accepted train and {len(validation)} "
            "validation records; training needs both",
            file=sys.stderr,
        )
        return 2
    given = json.loads(args.settings)
    example_format = given.pop("format", None)  # the workflow's EXAMPLE_FORMAT, for the manifest
    if given["dtype"] == "auto":
        from hivebench.models.precision import machine_dtype

        given["dtype"] = "bfloat16" if given["device"] == "cuda" else machine_dtype()
    stage_two = {
        k: given.pop(k)
        for k in ("arm", "orbit_weight", "field_weight", "transition_batch", "eventful_share")
        if k in given
    }
    settings = Settings(**given)
    about = {
        "training": args.training,
        "corpus_digest": digest(labels[["view", "record", "split"]].values.tolist()),
        "example_format": example_format,
    }
    objective = None
    if settings.warm_start is not None:
        if args.transitions is None:
            print("hivebench distill: error: a warm start (stage two) needs --transitions", file=sys.stderr)
            return 2
        from hivebench.train.structural import stage_two_objective

        objective, stage = stage_two_objective(tokenizer, pad, sources, args.transitions, settings, stage_two)
        about |= stage
    manifest = train(base, pad, train_set, validation, settings, Path(args.out), about, objective)
    print(
        f"{args.out}: update {manifest['selected_update']} of {settings.updates} selected, validation loss "
        f"{manifest['validation_loss']:.4f} ({len(train_set)} train, {len(validation)} validation examples)"
    )
    return 0


def cmd_viewset_report(args: argparse.Namespace) -> int:
    import pandas as pd

    from hivebench.report.page import write_tables
    from hivebench.waggle.study.viewset import evaluate

    def named(pairs: list[str]) -> dict[str, pd.DataFrame]:
        return {name: pd.read_parquet(path) for name, path in (pair.split("=", 1) for pair in pairs)}

    orbit_set = pd.read_parquet(args.orbit_views) if args.orbit_views else None
    orbits = {name: (orbit_set, frame) for name, frame in named(args.orbit_records).items()}
    table = evaluate(pd.read_parquet(args.views), named(args.records), args.reference, orbits)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    write_tables(table, out, "evaluation")
    print(f"{out}/evaluation.csv: {len(table)} controllers")
    return 0


def cmd_training_report(args: argparse.Namespace) -> int:
    import pandas as pd

    from hivebench.train.report import render, students_table

    manifests = {}
    for path in args.manifests:
        manifest = json.loads(Path(path).read_text())
        manifests[manifest["settings"]["seed"]] = manifest
    students = None
    if args.test:
        test = pd.read_parquet(args.test)
        records = {name: pd.read_parquet(path) for name, path in (pair.split("=", 1) for pair in args.students)}
        students = students_table(test, records)
    diagnostics = None
    if args.diagnostics:
        from hivebench.train.diagnostics import load, per_seed

        diagnostics = per_seed(*load(dict(pair.split("=", 1) for pair in args.diagnostics)))
    page = render(args.training, manifests, pd.read_csv(args.acceptance), students, Path(args.out), diagnostics)
    print(f"{page}: {len(manifests)} seeds" + ("" if students is None else f", {len(students) - 2} students"))
    return 0


def cmd_field_probe(args: argparse.Namespace) -> int:
    from hivebench.models.open import local_path
    from hivebench.train.probe import ProbeSettings, probe

    manifest = json.loads(Path(args.manifest).read_text())
    dtype = manifest["settings"]["dtype"]
    settings = ProbeSettings(seed=manifest["settings"]["seed"], device=manifest["settings"]["device"])
    adapter = Path(args.manifest).parent / "adapter"
    measured = probe(local_path(args.model), adapter, Path(args.transitions), dtype, settings)
    measured["adapter_digest"] = manifest["adapter_digest"]
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(measured, indent=1) + "\n")
    print(
        f"{args.out}: probe loss {measured['probe_loss']:.4f} ({measured['test']} transitions), eventful "
        f"{measured['probe_loss_eventful']:.4f} ({measured['eventful_test']}); fitted on {measured['fit']}"
    )
    return 0


def non_negative(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be a non-negative integer, got {value}")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="hivebench", description=__doc__)
    parser.add_argument("--version", action="version", version=f"hivebench {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    def with_config(p: argparse.ArgumentParser, study_filter: bool = False) -> None:
        # As people type it (`hivebench validate my.yaml`) or as a flag (`-c my.yaml`).
        p.add_argument("config_file", nargs="?", metavar="CONFIG", help=f"config file (default: {DEFAULT_CONFIG})")
        p.add_argument("--config", "-c", help="config file, as a flag")
        if study_filter:
            p.add_argument("--study", help="only this study")

    p = sub.add_parser("validate", help="check a config; print its cells and jobs per study")
    with_config(p, study_filter=True)
    p.set_defaults(func=cmd_validate)

    p = sub.add_parser("schema", help="print the config's JSON Schema: the core with every suite's fragment merged in")
    p.set_defaults(func=cmd_schema)

    p = sub.add_parser("cells", help="list the cells of a config: hash, study, task, method, N, seed, path")
    with_config(p, study_filter=True)
    p.add_argument("--json", action="store_true", help="print each fully resolved cell as canonical JSON")
    p.set_defaults(func=cmd_cells)

    p = sub.add_parser("episode", help="run one cell to a Parquet file, from a cell JSON or from flags")
    with_config(p)
    p.add_argument("--cell", help="a cell JSON file, or - for standard input (as printed by `cells --json`)")
    p.add_argument("--study", default="adhoc", help="study name recorded in the cell (default: adhoc)")
    p.add_argument("--task", help="task name from the config")
    p.add_argument("--method", help="method name from the config")
    p.add_argument("--population", type=int, help="number of agents (a cycle's length)")
    p.add_argument("--seed", type=non_negative)
    p.add_argument("--replicate", help="the method's replicate (its label), where it has replicates")
    p.add_argument("--out", help="output Parquet (default: the cell's path under results/episodes/)")
    p.set_defaults(func=cmd_episode)

    p = sub.add_parser("episodes", help="run a job block of cells (what the Snakemake episode rule calls)")
    p.add_argument("--spec", required=True, help="the block's JSON spec: shared cell fields plus seeds")
    p.add_argument("--summary", required=True, help="block summary Parquet to write (one row per cell)")
    p.add_argument("--record", help="JSON record of this run (state, host, pid, exit status, error line)")
    p.set_defaults(func=cmd_episodes)

    p = sub.add_parser(
        "counterfactual",
        help="replay a finished LLM cell with some agents switched to another method; forecast its new calls first",
    )
    p.add_argument("cell", help="the cell's episode file (results/episodes/.../s<seed>.parquet)")
    p.add_argument("--swap", action="append", required=True, help="AGENTS=METHOD, e.g. 0=soft_fp or 0,3=soft_fp")
    p.add_argument("--config", "-c", help=f"the config that names the methods (default: {DEFAULT_CONFIG})")
    p.add_argument("--forecast", action="store_true", help="only forecast the new calls; make none")
    p.set_defaults(func=cmd_counterfactual)

    p = sub.add_parser("estimate", help="the model calls, tokens and cost a config's LLM cells would need")
    with_config(p, study_filter=True)
    p.set_defaults(func=cmd_estimate)

    p = sub.add_parser(
        "status",
        help="cells done, damaged, failed, interrupted, running and pending per study and method; cost so far",
    )
    with_config(p, study_filter=True)
    style = p.add_mutually_exclusive_group()
    style.add_argument("--tsv", action="store_true", help="tab-separated values (notes go to standard error)")
    style.add_argument("--json", action="store_true", help="one JSON document: cells, problems, lock")
    p.set_defaults(func=cmd_status)

    p = sub.add_parser(
        "verify", help="read every finished file back in full; record damage for the next run to redo (exit 1)"
    )
    with_config(p, study_filter=True)
    p.set_defaults(func=cmd_verify)

    p = sub.add_parser("prepare-model", help="convert a builtin model (shipped in a PyPI package) to a folder")
    p.add_argument("name", help="builtin model name, e.g. SmolLM2-135M-Instruct")
    p.add_argument("--out", help="folder to write (default: models/<name>)")
    p.set_defaults(func=cmd_prepare_model)

    def with_bootstrap(p: argparse.ArgumentParser) -> None:
        p.add_argument("--episodes", required=True, help="results/<study>/episodes.parquet")
        p.add_argument("--out", required=True, help="Parquet file to write")
        p.add_argument("--resamples", type=int, default=10_000)
        p.add_argument("--confidence", type=float, default=0.95)
        p.add_argument("--bootstrap-seed", type=int, default=0)

    p = sub.add_parser("scores", help="per method, task and population: each metric's mean and interval")
    with_bootstrap(p)
    p.add_argument("--anchors", default=DEFAULT_ANCHORS, help="frozen normalisation anchors")
    p.add_argument("--interval", choices=["percentile", "bca"], default="percentile")
    p.set_defaults(func=cmd_scores)

    p = sub.add_parser("contrasts", help="paired method contrasts with stratified bootstrap intervals")
    with_bootstrap(p)
    p.add_argument(
        "--spec", required=True, help='JSON: {"reference": m} or {"pairs": [[a, b]]}, "metrics", "weights", "strata"'
    )
    p.add_argument("--anchors", default=DEFAULT_ANCHORS, help="frozen anchors: the normalised aggregates' contrasts")
    p.set_defaults(func=cmd_contrasts)

    def with_report_flags(p: argparse.ArgumentParser, out: str) -> None:
        p.add_argument("--episodes", required=True, help="results/<study>/episodes.parquet")
        p.add_argument("--out", required=True, help=out)
        p.add_argument("--resamples", type=int, default=10_000)
        p.add_argument("--confidence", type=float, default=0.95)
        p.add_argument("--bootstrap-seed", type=int, default=0)
        p.add_argument(
            "--anchors",
            help=f"anchors file with published tables to show beside ours (default: {DEFAULT_ANCHORS}, if there)",
        )
        p.add_argument(
            "--vega-bundle",
            help="the Vega bundle file `view --bundle` wrote: the interactive plots embed it instead of building it",
        )

    p = sub.add_parser("report", help="render a study's report: each suite's section, scores, contrasts, index.html")
    with_report_flags(p, "report folder, e.g. reports/<study>")
    p.add_argument("--scores", help="scores table (default: scores.parquet beside the episodes)")
    p.add_argument("--contrasts", help="contrasts table (default: contrasts.parquet beside the episodes)")
    p.add_argument("--only-page", action="store_true", help="the sections are rendered already (report-section)")
    p.set_defaults(func=cmd_report)

    p = sub.add_parser("report-section", help="render one suite's report section from a study's episodes")
    with_report_flags(p, "the section's folder: reports/<study>/<suite>")
    p.add_argument(
        "--suite",
        required=True,
        help=f"the suite (its episodes are the rows with this suite), {WAGGLE_SECTION} (the Waggle runtime), "
        f"{MATRIX_SECTION} (the Waggle matrix's comparisons) or {ROBUSTNESS_SECTION} (perturbed arms)",
    )
    p.set_defaults(func=cmd_report_section)

    p = sub.add_parser("view", help="write a cell's episode as one self-contained HTML page; print its path")
    p.add_argument(
        "cells",
        nargs="*",
        metavar="CELL",
        help="a cell file: results/episodes/<study>/<suite>/<task>/<method>/n<N>/s<seed>.parquet",
    )
    where = p.add_mutually_exclusive_group()
    where.add_argument("--out", help="the page to write (default: beside the cell file, s<seed>.html)")
    where.add_argument(
        "--folder", help="write every cell's page into this folder, laid out as the cells, sharing one Vega bundle"
    )
    p.add_argument(
        "--bundle",
        help="with --folder: the Vega bundle file the pages load (default: one written into the folder); "
        "alone: write that file",
    )
    p.set_defaults(func=cmd_view)

    p = sub.add_parser("report-index", help="write the landing page of a run: every study, what ran, when, calls, cost")
    with_config(p)
    p.add_argument("--out", default="reports/index.html", help="the page (default: reports/index.html)")
    p.set_defaults(func=cmd_report_index)

    p = sub.add_parser("viewset-decide", help="a Waggle controller's admitted record for every view of a set")
    p.add_argument("--params", required=True, help="JSON: the waggle method's parameters, as a cell holds them")
    p.add_argument("--views", required=True, help="the view set (Parquet)")
    p.add_argument("--seed", type=non_negative, default=0, help="draws each request's sample index")
    p.add_argument("--out", required=True, help="the records (Parquet); the response cache goes beside it")
    p.set_defaults(func=cmd_viewset_decide)

    p = sub.add_parser("corpus-label", help="the teacher's record for every view of a decision corpus")
    p.add_argument("--views", required=True, help="the corpus (Parquet)")
    p.add_argument("--teacher", required=True, help='JSON: "rule", or a waggle method\'s parameters')
    p.add_argument("--seed", type=non_negative, default=0, help="a model teacher's sample indices")
    p.add_argument("--out", required=True, help="the labels (Parquet); a model's response cache goes beside it")
    p.add_argument("--acceptance", required=True, help="records accepted per suite, class and split (CSV)")
    p.add_argument("--test", required=True, help="the test views with the teacher's accepted records (Parquet)")
    p.set_defaults(func=cmd_corpus_label)

    p = sub.add_parser("distill", help="train a LoRA adapter on a labelled corpus's accepted records")
    p.add_argument("--labels", required=True, help="the labelled corpus (Parquet)")
    p.add_argument(
        "--model", required=True, help="the base model's transformers folder, or a hub id in the local cache"
    )
    p.add_argument("--settings", required=True, help="JSON: hivebench.train.distill.Settings")
    p.add_argument("--training", default="", help="the training's name, for the manifest")
    p.add_argument("--transitions", help="stage two (a warm start in the settings): the transition corpus (Parquet)")
    p.add_argument("--out", required=True, help="the folder: checkpoints/, adapter/, manifest.json")
    p.set_defaults(func=cmd_distill)

    p = sub.add_parser("field-probe", help="a trained adapter's frozen-probe field loss on held-out transitions")
    p.add_argument("--manifest", required=True, help="the training seed's manifest.json (its adapter beside it)")
    p.add_argument(
        "--model", required=True, help="the base model's transformers folder, or a hub id in the local cache"
    )
    p.add_argument("--transitions", required=True, help="the corpus's transitions (Parquet) with their probe splits")
    p.add_argument("--out", required=True, help="the losses (JSON)")
    p.set_defaults(func=cmd_field_probe)

    p = sub.add_parser("training-report", help="a training's loss curves, corpus and students on the test views")
    p.add_argument("--training", required=True, help="the training's name")
    p.add_argument("--manifests", nargs="+", required=True, help="each seed's manifest.json")
    p.add_argument("--acceptance", required=True, help="the corpus's acceptance table (CSV)")
    p.add_argument("--test", help="the test views with the teacher's records (Parquet)")
    p.add_argument("--students", nargs="*", default=[], help="STUDENT=records.parquet on the test views")
    p.add_argument("--out", required=True, help="the report's folder")
    p.add_argument(
        "--diagnostics",
        nargs="*",
        default=[],
        help="stage two: NAME=PATH of the test and orbit views, each seed's records and probe",
    )
    p.set_defaults(func=cmd_training_report)

    p = sub.add_parser("viewset-report", help="score controllers' records on a view set")
    p.add_argument("--views", required=True, help="the view set (Parquet)")
    p.add_argument("--records", nargs="+", required=True, help="CONTROLLER=records.parquet, one per controller")
    p.add_argument("--reference", help="the controller whose records macro-F1 and exact match compare with")
    p.add_argument("--orbit-views", help="the view set relabelled (Parquet)")
    p.add_argument("--orbit-records", nargs="*", default=[], help="CONTROLLER=records on the orbit views")
    p.add_argument("--out", required=True, help="folder for evaluation.csv, .md and .tex")
    p.set_defaults(func=cmd_viewset_report)
    return parser


def expected_errors() -> tuple[type[Exception], ...]:
    """Errors that are the input's or the machine's, not hivebench's: one line naming the problem,
    exit 2. (Imported here, not with this module: hivebench.cells loads the registry, and with it the
    installed plug-ins, which `main` loads first to name a broken one.)"""
    from hivebench.cells import CellError
    from hivebench.counterfactual import CounterfactualError
    from hivebench.spend.ledger import BudgetReached, LedgerError

    return (
        BudgetReached,
        LedgerError,
        CellError,
        TaskParamError,
        BackendError,
        AnchorError,
        EpisodeError,
        CounterfactualError,
        OSError,
        json.JSONDecodeError,
    )


def exit_status(exc: BaseException) -> int:
    if isinstance(exc, SystemExit):
        return exc.code if isinstance(exc.code, int) else 1
    return 2 if isinstance(exc, (ConfigError, PluginError, *expected_errors())) else 1


def error_line(exc: BaseException) -> str:
    if isinstance(exc, SystemExit):
        return "terminated by SIGTERM" if exc.code == 128 + signal.SIGTERM else f"exited with {exc.code}"
    text = str(exc).strip().splitlines()
    if isinstance(exc, expected_errors()):
        return text[0] if text else ""
    return f"{type(exc).__name__}: {' '.join(text)}"


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if hasattr(args, "config_file"):
        if args.config_file and args.config and args.config_file != args.config:
            parser.error(f"two config files given: {args.config_file} and --config {args.config}")
        args.config = args.config_file or args.config or DEFAULT_CONFIG
    # Progress of long episodes (rounds, calls, tokens) goes to standard error: the job's log.
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", stream=sys.stderr)
    logging.getLogger("httpx").setLevel(logging.WARNING)  # a line per HTTP request otherwise
    try:
        import_module("hivebench.registry")  # the installed plug-ins: a broken one is named before any command
        return args.func(args)
    except BrokenPipeError:  # output piped into `head` and the like (an OSError: caught first)
        sys.stderr.close()
        return 0
    except (ConfigError, PluginError) as exc:
        print(exc, file=sys.stderr)
        return 2
    except expected_errors() as exc:
        print(f"hivebench {args.command}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
