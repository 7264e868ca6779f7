"""The episode page: one HTML file that opens from disk with no network. Vega-Lite (its JavaScript
bundled by vl-convert into the page) draws the scene and the per-step measures from the spec
hivebench.view.spec writes; a small
script (viewer.js) drives the step slider and fills the agent panel from the episode's rows. Every
text from a model, a config or a table reaches the page as JSON data and is shown as text."""

from __future__ import annotations

import html
import json
import os
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from hivebench.registry import SUITE_OBJECTS
from hivebench.suite import load as load_target
from hivebench.view.bundle import script_safe, vega_bundle
from hivebench.view.episode import Episode
from hivebench.view.scene import Scene, layout, placed_agents
from hivebench.view.spec import vega_spec

# The page loads nothing: its scripts and data are inline, and the policy forbids every request (Vega
# compiles its expressions with Function: 'unsafe-eval').
POLICY = "default-src 'none'; script-src 'unsafe-inline' 'unsafe-eval'; style-src 'unsafe-inline'; img-src data: blob:"
LICENCE = (
    "Vega, Vega-Lite and Vega-Embed (https://vega.github.io), BSD-3-Clause, copyright the University of "
    "Washington Interactive Data Lab; bundled by vl-convert"
)
PANEL_COLUMNS_LAST = ("notes", "record", "reply")  # long texts, shown whole below the row's fields


def json_script(value: Any) -> str:
    """JSON for a <script type="application/json"> element: every "<" escaped, so no text inside it
    (a model's reply holding "</script>") can close the element."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False).replace("<", "\\u003c")


def default_scene(episode: Episode) -> Scene:
    """A suite without a viewer: its agents on a circle, without contacts."""
    positions = layout(episode.n, np.zeros((0, 2), dtype=np.int64), int(episode.cell["seed"]), ring=True)
    agents = episode.agents
    return Scene(agents=placed_agents(agents, positions, agents["agent"]), state="agent", metrics=pd.DataFrame())


def scene_of(episode: Episode) -> Scene:
    target = SUITE_OBJECTS[episode.cell["suite"]].viewer
    return default_scene(episode) if target is None else load_target(target)(episode)


def model_measures(agents: pd.DataFrame) -> pd.DataFrame:
    """An LLM method's per-state measures: its decisions by outcome and the tokens they took."""
    parts = []
    if "decision" in agents:
        outcomes = agents.dropna(subset=["decision"]).groupby(["step", "decision"]).size()
        parts.append(outcomes.rename("value").reset_index().rename(columns={"decision": "metric"}))
    if "input_tokens" in agents:
        tokens = agents.groupby("step")[["input_tokens", "output_tokens"]].sum().sum(axis=1)
        parts.append(tokens.rename("value").reset_index().assign(metric="tokens"))
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=["step", "metric", "value"])


def links(scene: Scene, episode: Episode) -> pd.DataFrame:
    """Each round's messages and traces between two agents as lines from sender to receiver (drawn at
    the state they were sent from), and the broadcasts as their sender's place (x2, y2 NaN)."""
    places = scene.agents[["step", "agent", "x", "y"]]
    parts = []
    for name, table in episode.tables.items():
        sender = "sender" if "sender" in table else "writer" if "writer" in table else None
        if sender is None or not len(table):
            continue
        rows = table[["step", sender]].rename(columns={sender: "agent"})
        rows["to"] = table["receiver"] if "receiver" in table else -1
        # a perturbed medium's deliveries (hivebench.perturb.transit) by their fate: lost, delayed, ...
        rows["kind"] = table["fate"].astype(str) if "fate" in table else name
        drawn = rows.merge(places, on=["step", "agent"]).merge(
            places.rename(columns={"agent": "to", "x": "x2", "y": "y2"}), on=["step", "to"], how="left"
        )
        parts.append(drawn[["step", "x", "y", "x2", "y2", "kind"]])
    return (
        pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=["step", "x", "y", "x2", "y2", "kind"])
    )


def flags(scene: Scene, episode: Episode) -> pd.DataFrame:
    """The agents a perturbation marks at each state (hivebench.perturb): `faulty`, `away` (from the
    swarm, churn), `did not act` (asleep, failed or waiting on its clock in the round that led to the
    state) and on clocks `applied a late decision` (staleness above 0), at their places."""
    agents = episode.agents
    marked = []
    if "faulty" in agents:
        marked.append(agents.loc[agents["faulty"].fillna(False).astype(bool), ["step", "agent"]].assign(flag="faulty"))
    away = ~agents["present"].fillna(True).astype(bool) if "present" in agents else pd.Series(False, agents.index)
    if away.any():
        marked.append(agents.loc[away, ["step", "agent"]].assign(flag="away"))
    if "acted" in agents:
        idle = ~agents["acted"].fillna(True).astype(bool) & (agents["step"] > 0) & ~away
        marked.append(agents.loc[idle, ["step", "agent"]].assign(flag="did not act"))
    if "staleness" in agents:
        late = agents["staleness"].fillna(0) > 0
        marked.append(agents.loc[late, ["step", "agent"]].assign(flag="applied a late decision"))
    if not marked:
        return pd.DataFrame(columns=["step", "x", "y", "flag"])
    places = scene.agents[["step", "agent", "x", "y"]]
    return pd.concat(marked, ignore_index=True).merge(places, on=["step", "agent"])[["step", "x", "y", "flag"]]


def columns_of(frame: pd.DataFrame) -> dict[str, list[Any]]:
    """A table as {column: values} with JSON's null for a missing value (lists kept as lists)."""
    out = {}
    for name in frame.columns:
        values = frame[name].astype(object).where(frame[name].notna(), None).tolist()
        out[name] = [v.tolist() if isinstance(v, np.ndarray) else v for v in values]
    return out


def payload(episode: Episode) -> dict[str, Any]:
    """What the panel shows: the per-agent rows, the side tables, the cached calls the rows name."""
    keys = set()
    if "call_keys" in episode.agents:
        keys = {k for ks in episode.agents["call_keys"].dropna() for k in ks}
    long_texts = [c for c in PANEL_COLUMNS_LAST if c in episode.agents]
    return {
        "steps": episode.steps,
        "n": episode.n,
        "agents": columns_of(episode.agents),
        "long": long_texts,
        "tables": {name: columns_of(table) for name, table in episode.tables.items()},
        "calls": {k: episode.calls[k] for k in sorted(keys) if k in episode.calls},
        "cached": bool(episode.calls),
    }


def title_of(cell: dict[str, Any]) -> str:
    replicate = f" (replicate {cell['replicate']})" if "replicate" in cell else ""
    return (
        f"{cell['study']}: {cell['suite']} / {cell['task']['name']} / {cell['method']['name']}{replicate}, "
        f"N = {cell['population']}, seed {cell['seed']}"
    )


def summary_rows(summary: dict[str, Any]) -> str:
    """The episode's summary as a table (lists, such as a prey's path, left out: the drawing shows them)."""
    e = html.escape
    shown = {k: v for k, v in summary.items() if not isinstance(v, (list, dict))}
    return "".join(
        f"<tr><th>{e(str(k))}</th><td>{e(f'{v:.4g}' if isinstance(v, float) else str(v))}</td></tr>"
        for k, v in shown.items()
    )


EVENT_COLUMNS = ("asked", "staleness", "present")  # a cell on clocks or under churn (hivebench.perturb)


def event_buttons(episode: Episode) -> str:
    """On clocks or under churn: the buttons that step through the chosen agent's events (viewer.js)."""
    if not any(c in episode.agents for c in EVENT_COLUMNS):
        return ""
    return (
        '<button id="previous-event" type="button">previous event</button>'
        '<button id="next-event" type="button">next event</button>'
    )


def render(episode: Episode, out: str | Path, bundle: Path | None = None) -> Path:
    """Write the episode's page to `out`; return its path. With `bundle` (a file holding vega_bundle(),
    shared by a folder of pages) the page loads it from there instead of carrying its own copy."""
    scene = scene_of(episode)
    lines = links(scene, episode)
    metrics = pd.concat([scene.metrics, model_measures(episode.agents)], ignore_index=True)
    spec = vega_spec(scene, lines, metrics, episode.n, flags(scene, episode))
    script = resources.files("hivebench.view").joinpath("viewer.js").read_text(encoding="utf-8")
    style = resources.files("hivebench.view").joinpath("viewer.css").read_text(encoding="utf-8")
    e = html.escape
    title = title_of(episode.cell)
    path = Path(out)
    if bundle is None:
        vega, policy = f"<script>{vega_bundle()}</script>", POLICY
    else:  # a classic script: Chrome loads no module from a file: URL
        vega = f'<script src="{e(os.path.relpath(bundle, path.parent))}"></script>'
        policy = POLICY.replace("script-src", "script-src file:")  # local files only
    page = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{e(policy)}">
<title>{e(title)}</title>
<style>{style}</style>
</head><body>
<h1>{e(title)}</h1>
<p class="source">Cell file: <code>{e(str(episode.path))}</code></p>
<div id="controls">
<button id="play" type="button">play</button>
<input id="step" type="range" min="0" max="{episode.steps}" value="0" aria-label="state">
<span id="step-label">state 0 of {episode.steps}</span>
{event_buttons(episode)}
<label>agent <select id="agent"></select></label>
</div>
<div id="main"><div id="scene"></div><aside id="panel" aria-live="polite"></aside></div>
<details><summary>Episode summary</summary><table class="summary">{summary_rows(episode.summary)}</table></details>
<p class="licence">Drawn with {e(LICENCE)}.</p>
<script type="application/json" id="episode-spec">{json_script(spec)}</script>
<script type="application/json" id="episode-data">{json_script(payload(episode))}</script>
{vega}
<script type="module">{script_safe(script)}</script>
</body></html>
"""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(page, encoding="utf-8")
    return path
