"""The shared report charts stay readable: one scaling row per task, or per suite beyond 40 tasks."""

from __future__ import annotations

import pandas as pd
import pytest

from hivebench.report.charts import MAX_TASK_ROWS, scaling_chart


def scores(tasks: int, name: str = "t{t}") -> pd.DataFrame:
    rows = [
        {
            "suite": "silobench",
            "task": name.format(t=t),
            "method": m,
            "population": n,
            "metric": "exact",
            "mean": t / tasks,
            "lo": 0.0,
            "hi": 1.0,
            "n": 3,
            "episodes": 3,
        }
        for t in range(tasks)
        for m in ("a", "b")
        for n in (4, 8)
    ]
    return pd.DataFrame(rows)


def test_the_scaling_chart_has_a_row_per_task_or_per_entry_or_suite_beyond_the_limit():
    few = scaling_chart(scores(MAX_TASK_ROWS), 0.95).data
    assert few["task"].nunique() == MAX_TASK_ROWS
    many = scaling_chart(scores(MAX_TASK_ROWS + 1), 0.95).data
    assert list(pd.unique(many["task"])) == ["silobench (mean over its tasks)"] and len(many) == 4
    assert many["mean"].tolist() == pytest.approx(
        [sum(t / (MAX_TASK_ROWS + 1) for t in range(MAX_TASK_ROWS + 1)) / (MAX_TASK_ROWS + 1)] * 4
    )
    entries = pd.concat([scores(30, "p2p.I-{t}"), scores(30, "oracle.I-{t}")])  # members of two config entries
    assert list(pd.unique(scaling_chart(entries, 0.95).data["task"])) == [
        "p2p (mean over its tasks)",
        "oracle (mean over its tasks)",
    ]


def test_a_saved_plot_embeds_the_workflows_bundle_file_and_builds_none(tmp_path, monkeypatch):
    """The report's rules pass the bundle the vega_bundle rule wrote (`--vega-bundle`): altair's inline
    plots take it from there, where building it again costs every report job about two seconds."""
    from hivebench.report.page import save_chart
    from hivebench.view import bundle

    def build(*args, **kwargs):
        raise AssertionError(f"the bundle was built again: {args} {kwargs}")

    monkeypatch.setattr(bundle, "_bundles", {})
    monkeypatch.setattr(bundle, "_build_bundle", build)
    written = tmp_path / "vega.js"
    written.write_text("/* the workflow's copy */ window.vegaEmbed = function () {};", encoding="utf-8")
    bundle.use_vega_bundle(written)
    save_chart(scaling_chart(scores(2), 0.95), tmp_path, "scaling")
    assert "/* the workflow's copy */" in (tmp_path / "scaling.html").read_text(encoding="utf-8")
    assert (tmp_path / "scaling.png").stat().st_size > 0
