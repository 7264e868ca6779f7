"""The landing page of a run (reports/index.html): every study the config holds, what it ran (suites,
tasks, methods and their models, populations, seeds), when its episodes were collected, the model
calls, tokens and cost its episodes record, and a link to its report; the commit and hivebench version
that wrote the page. Model names come from the config; nothing else of a method's settings (a server's
address, a key's variable) is shown."""

from __future__ import annotations

import datetime
import html
import subprocess
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow.parquet as pq

from hivebench import __version__
from hivebench.config import has_test_views, resolved_task_params, task_sizes
from hivebench.paths import EPISODES_TABLE
from hivebench.report import STYLE

USAGE = ("llm_calls", "input_tokens", "output_tokens", "cost_usd")


def commit() -> str:
    """The checkout's commit (with "+ changes" where its tracked files differ), or why there is none."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True, check=True)
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True)
    except (OSError, subprocess.CalledProcessError):
        return "not a git checkout"
    return head.stdout.strip() + (" + uncommitted changes" if dirty.stdout.strip() else "")


def when(path: Path) -> str:
    stamp = datetime.datetime.fromtimestamp(path.stat().st_mtime, datetime.UTC)
    return stamp.strftime("%Y-%m-%d %H:%M UTC")


def models(config: dict[str, Any], methods: list[str]) -> list[str]:
    """The models a study's methods call, as "method: model (backend)"."""
    found = []
    for name in methods:
        entry = config["methods"][name]
        if "model" in entry:
            found.append(f"{name}: {entry['model']} ({entry.get('backend', 'openai')})")
    return found


def populations(config: dict[str, Any], study: dict[str, Any], base: Path) -> list[int]:
    """The populations a study's tasks run at: a fixed graph's own size, else the study's (a study of
    fixed graphs alone gives none). `base`: the config file's folder (an edges file is read from it)."""
    sizes: set[int] = set()
    for name in study["tasks"]:
        task = config["tasks"][name]
        sizes.update(task_sizes(task, resolved_task_params(task, base), study.get("populations")) or [])
    return sorted(sizes)


def study_row(config: dict[str, Any], name: str, root: Path, base: Path) -> dict[str, str]:
    study = config["studies"][name]
    table = root / EPISODES_TABLE.format(study=name)
    row = {
        "study": name,
        "what": study.get("description", ""),
        "tasks": ", ".join(study["tasks"]),
        "methods": ", ".join(study["methods"]),
        "models": "; ".join(models(config, study["methods"])) or "none",
        "N": ", ".join(str(n) for n in populations(config, study, base)),
    }
    if not table.exists():
        return {**row, "episodes": "not collected yet", "collected": "", "calls": "", "tokens": "", "cost": ""}
    episodes = pd.read_parquet(table, columns=["seed", *(c for c in USAGE if c in pq.read_schema(table).names)])
    total = {c: float(episodes[c].sum()) if c in episodes else 0.0 for c in USAGE}
    cost = f"{total['cost_usd']:.2f} USD" if "cost_usd" in episodes else "not priced" if total["llm_calls"] else ""
    return {
        **row,
        "episodes": f"{len(episodes):,}",
        "collected": when(table),
        "calls": f"{int(total['llm_calls']):,}" if total["llm_calls"] else "",
        "tokens": f"{int(total['input_tokens']):,} in / {int(total['output_tokens']):,} out"
        if total["llm_calls"]
        else "",
        "cost": cost,
    }


def trainings_html(config: dict[str, Any]) -> str:
    """Links to the config's training reports (reports/trainings/<training>/), where it has trainings."""
    if not config["trainings"]:
        return ""
    e = html.escape
    items = []
    for name, training in config["trainings"].items():
        about = f"{e(str(training['model']))}, corpus {e(training['corpus'])}"
        if "warm_start" in training:
            warm = e(training["warm_start"])
            about += f", stage two ({e(training['arm'])}) from {warm}"
            if has_test_views(config["corpora"][training["corpus"]]):
                about += f' (<a href="factorials/{warm}/index.html">its factorial</a>)'
        items.append(f'<li><a href="trainings/{e(name)}/index.html">{e(name)}</a>: {about}</li>')
    return (
        "<h2>Trainings</h2><p>Loss curves, corpus and the students on the test views; a stage-two arm's "
        f"structural diagnostics, and its factorial's arms side by side.</p><ul>{''.join(items)}</ul>"
    )


def spend_html(config: dict[str, Any], root: Path) -> str:
    """What the ledger counts as spent on calls to model servers, per study and method, and each
    budget's part of it (docs/spend.md); nothing where no call was made."""
    from hivebench.spend.ledger import AMOUNTS, SPEND_DIR, amount_text, by_method, read_ledger, scope_name, sums
    from hivebench.spend.run import settings_of

    spent = read_ledger(root / SPEND_DIR / "ledger.json")["spent"]
    rows = by_method(spent)
    if not rows:
        return ""
    e = html.escape
    body = "".join(
        f"<tr><td>{e(r['study'])}</td><td>{e(r['method'])}</td><td>{r['calls']:,}</td>"
        f"<td>{r['input_tokens']:,} in / {r['output_tokens']:,} out</td><td>{r['usd']:.4f} USD</td></tr>"
        for r in rows
    )
    items = []
    for scope, budget in settings_of(config).budgets.capped_scopes():
        used = sums(spent, scope)
        parts = [
            f"{amount_text(k, getattr(used, k))} of {amount_text(k, cap)}"
            for k in AMOUNTS
            if (cap := getattr(budget, k)) is not None
        ]
        items.append(f"<li>{e(scope_name(scope))}: {e('; '.join(parts))} spent</li>")
    return (
        "<h2>Spend</h2><p>Calls to model servers as the ledger counts them (results/spend/ledger.json: "
        "unfinished cells' calls too, a replayed call never again); <code>hivebench status</code> adds "
        "each budget's bound for the cells still to run.</p>"
        '<table class="data landing"><thead><tr><th>study</th><th>method</th><th>calls</th><th>tokens</th>'
        f"<th>cost</th></tr></thead><tbody>{body}</tbody></table>" + (f"<ul>{''.join(items)}</ul>" if items else "")
    )


def render_landing(config: dict[str, Any], source: str, out: str | Path, root: str | Path = ".") -> Path:
    """Write the landing page to `out` (its links are relative to it: reports/<study>/index.html)."""
    path = Path(out)
    rows = [study_row(config, name, Path(root), Path(source).parent) for name in config["studies"]]
    e = html.escape
    header = ["study", "what", "tasks", "methods", "models", "N", "episodes", "collected", "calls", "tokens", "cost"]
    header = [key for key in header if any(row[key] for row in rows)]  # a column that holds nothing is left out
    body = "".join(
        "<tr>"
        + f'<td><a href="{e(row["study"])}/index.html">{e(row["study"])}</a></td>'
        + "".join(f"<td>{e(row[key])}</td>" for key in header[1:])
        + "</tr>"
        for row in rows
    )
    written = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    page = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>hivebench: {e(source)}</title>
<style>
{STYLE}
td {{ text-align: left; white-space: normal; }}
</style></head><body>
<h1>hivebench run: {e(source)}</h1>
<p>Written {e(written)} by hivebench {e(__version__)}, commit {e(commit())}. Each study's report has its
tables beside the published ones, its charts and its episode pages; calls, tokens and cost are the sums
over its episodes' summaries (a call answered from the response cache counts as it did when made).</p>
<table class="data landing"><thead><tr>{"".join(f"<th>{e(h)}</th>" for h in header)}</tr></thead>
<tbody>{body}</tbody></table>
{spend_html(config, Path(root))}
{trainings_html(config)}
</body></html>
"""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(page, encoding="utf-8")
    return path
