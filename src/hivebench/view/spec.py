"""The episode page's Vega-Lite spec, written as plain data (altair's builders cost a third of a
second a page; the tests check the spec against Vega-Lite's schema with altair): the scene at the
shown state beside the per-state measures, one `step` parameter that the page's slider sets."""

from __future__ import annotations

from typing import Any

import pandas as pd

from hivebench.view.scene import EVERY_STATE, Scene

SCENE_PX = 480  # the scene's side in pixels
METRIC_SIZE = (320, 80)  # each measure's chart
LABELLED = 24  # agents are named on the drawing up to this population
TILE_COLOURS = {"wall": "#555555", "food": "#2ca02c", "nest": "#ff7f0e", "prey": "#d62728", "box": "#8c564b"}
LINK_COLOURS = ["#f58518", "#54a24b", "#b279a2"]  # messages, traces, ...
# a perturbed medium's deliveries (hivebench.perturb.transit), each in its own colour
FATE_COLOURS = {"lost": "#d62728", "delayed": "#17becf", "duplicated": "#9467bd"}
# the agents a perturbation marks, by shape
FLAG_MARKS = {"faulty": "cross", "away": "diamond", "did not act": "square", "applied a late decision": "triangle-up"}


def records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """A table's rows for a Vega dataset, a missing value as null."""
    return frame.astype(object).where(frame.notna(), None).to_dict(orient="records")


def layer(data: str, mark: dict[str, Any], encoding: dict[str, Any], per_state: bool = True) -> dict[str, Any]:
    """One Vega-Lite layer over the named dataset; `per_state`: only the rows of the shown state (the
    `step` parameter), and those of every state (EVERY_STATE)."""
    spec = {"data": {"name": data}, "mark": mark, "encoding": encoding}
    if per_state:
        spec["transform"] = [{"filter": f"datum.step == step || datum.step == {EVERY_STATE}"}]
    return spec


def nominal(field: str, title: str, domain: list[Any], **scale: Any) -> dict[str, Any]:
    return {"field": field, "type": "nominal", "title": title, "scale": {"domain": domain, **scale}}


def scene_spec(
    scene: Scene, lines: pd.DataFrame, n: int, datasets: dict[str, Any], flags: pd.DataFrame | None = None
) -> dict[str, Any]:
    """The contact structure at the shown state: edges, a grid's tiles, the round's messages, the
    agents coloured by their state, the broadcasters ringed, the agents a perturbation marks (`flags`),
    and (up to LABELLED agents) their numbers."""
    if scene.grid:
        bounds, reverse = [-0.5, scene.size - 0.5], True
        tile = (SCENE_PX / max(scene.size, 1)) ** 2
        node = tile * 0.45
    else:
        bounds, reverse = [-1.15, 1.15], False
        tile, node = 0.0, max(40.0, min(400.0, 6000.0 / max(n, 1)))
    x = {"field": "x", "type": "quantitative", "scale": {"domain": bounds}, "axis": None}
    y = {"field": "y", "type": "quantitative", "scale": {"domain": bounds, "reverse": reverse}, "axis": None}
    ends = {"x2": {"field": "x2"}, "y2": {"field": "y2"}}
    layers = []
    if len(scene.edges):
        datasets["edges"] = records(scene.edges)
        layers.append(layer("edges", {"type": "rule", "color": "#bbbbbb"}, {"x": x, "y": y, **ends}, False))
    if len(scene.tiles):
        datasets["tiles"] = records(scene.tiles)
        kinds = [kind for kind in TILE_COLOURS if kind in set(scene.tiles["kind"])]
        colour = nominal("kind", "map", kinds, range=[TILE_COLOURS[k] for k in kinds])
        mark = {"type": "square", "size": tile * 0.92, "opacity": 0.9}
        layers.append(layer("tiles", mark, {"x": x, "y": y, "color": colour, "tooltip": [{"field": "kind"}]}))
    pairs = lines.dropna(subset=["x2"])
    if len(pairs):
        datasets["links"] = records(pairs)
        kinds = sorted(pd.unique(pairs["kind"]).tolist())
        others = iter(LINK_COLOURS)
        colours = [FATE_COLOURS.get(kind) or next(others) for kind in kinds]
        drawn = {
            "color": nominal("kind", "sent this round", kinds, range=colours),
            "strokeDash": nominal("kind", "sent this round", kinds),
        }
        layers.append(
            layer("links", {"type": "rule", "strokeWidth": 2.5, "opacity": 0.8}, {"x": x, "y": y, **ends, **drawn})
        )
    datasets["agents"] = records(scene.agents)
    # every state's values in the domain: a value keeps its colour from state to state
    states = sorted(pd.unique(scene.agents["state"]).tolist(), key=lambda v: (len(v), v))
    agent = {
        "x": x,
        "y": y,
        "color": nominal("state", scene.state, states, scheme="set2"),
        "tooltip": [{"field": "agent", "type": "quantitative"}, {"field": "state", "title": scene.state}],
    }
    circle = {"type": "circle", "size": node, "opacity": 1, "stroke": "#222222", "strokeWidth": 0.8}
    layers.append({**layer("agents", circle, agent), "name": "agents"})  # its SVG group's class: agents_marks
    broadcasts = lines[lines["x2"].isna()]
    if len(broadcasts):
        datasets["broadcasts"] = records(broadcasts)
        ring = {"type": "point", "shape": "circle", "filled": False, "size": node * 2.2, "color": "#e45756"}
        layers.append(layer("broadcasts", {**ring, "strokeWidth": 2}, {"x": x, "y": y}))
    if flags is not None and len(flags):
        datasets["flags"] = records(flags)
        kinds = [kind for kind in FLAG_MARKS if kind in set(flags["flag"])]
        marked = {"x": x, "y": y, "shape": nominal("flag", "perturbed", kinds, range=[FLAG_MARKS[k] for k in kinds])}
        mark = {"type": "point", "filled": False, "size": node * 1.6, "strokeWidth": 2, "color": "#222222"}
        layers.append(layer("flags", mark, marked))
    if n <= LABELLED:
        text = {"x": x, "y": y, "text": {"field": "agent", "type": "quantitative"}}
        layers.append(layer("agents", {"type": "text", "dy": -14, "fontSize": 11}, text))
    return {
        "layer": layers,
        "width": SCENE_PX,
        "height": SCENE_PX,
        "title": "the contact structure at this state",
        "resolve": {"scale": {"color": "independent"}},
    }


def metrics_spec(metrics: pd.DataFrame, datasets: dict[str, Any]) -> dict[str, Any]:
    """Each measure against the state, a rule at the shown one."""
    datasets["now"] = [{}]
    marker = {
        "data": {"name": "now"},
        "transform": [{"calculate": "step", "as": "now"}],
        "mark": {"type": "rule", "color": "#d62728"},
        "encoding": {"x": {"field": "now", "type": "quantitative"}},
    }
    charts = []
    for number, name in enumerate(pd.unique(metrics["metric"])):
        rows = metrics[metrics["metric"] == name]
        datasets[f"metric{number}"] = records(rows[["step", "value"]])
        line = {
            "x": {"field": "step", "type": "quantitative", "title": "state"},
            "y": {"field": "value", "type": "quantitative", "title": None},
            "tooltip": [{"field": "step", "type": "quantitative"}, {"field": "value", "type": "quantitative"}],
        }
        mark = {"type": "line", "point": len(rows) < 120}
        charts.append(
            {
                "layer": [layer(f"metric{number}", mark, line, False), marker],
                "width": METRIC_SIZE[0],
                "height": METRIC_SIZE[1],
                "title": str(name),
            }
        )
    return {"vconcat": charts}


def vega_spec(
    scene: Scene, lines: pd.DataFrame, metrics: pd.DataFrame, n: int, flags: pd.DataFrame | None = None
) -> dict[str, Any]:
    """The page's Vega-Lite spec: the scene and the measures side by side, one `step` parameter."""
    datasets: dict[str, Any] = {}
    parts = [scene_spec(scene, lines, n, datasets, flags)]
    if len(metrics):
        parts.append(metrics_spec(metrics, datasets))
    return {
        "$schema": "https://vega.github.io/schema/vega-lite/v6.json",  # a name, never fetched
        "hconcat": parts,
        "resolve": {"scale": {"color": "independent", "strokeDash": "independent", "shape": "independent"}},
        "params": [{"name": "step", "value": 0}],  # the shown state; the slider sets it
        "datasets": datasets,
    }
