"""The training report: what a training made and how its student decides the held-out test views.

- the loss curves of every training seed (train loss per update, validation decision loss per
  checkpoint, the update selected marked), from the manifests;
- the corpus table: views and teacher records accepted per substrate, situation class and split;
- the students on the test views (the teacher's accepted records on the corpus's test bundles), the
  untrained base model and each seed's adapter side by side: valid JSON, schema-valid and executable
  first decodes, the ladder's rungs, the derived six-mode macro-F1 and exact full-record match against
  the teacher (hivebench.waggle.study.viewset.evaluate), with the paper's 800-view figures beside.
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

import altair as alt
import pandas as pd

from hivebench.agents.waggle.ladder import RUNGS
from hivebench.report import STYLE
from hivebench.report.page import html_table, save_chart, table_links, write_tables
from hivebench.waggle.runtime.admit import REFUSALS
from hivebench.waggle.study.viewset import evaluate

TEACHER = "teacher"
# Seed paper 003 (section 4): the frozen controller (Qwen3-4B-Instruct-2507, GPT-4o's records) on 800
# held-out local views: "Every generation is valid JSON, satisfies the schema, and is executable.
# Derived six-mode macro-F1 is 100% ... while exact full-record match is 74.75%."
PAPER = {
    "student": "paper (800 views)",
    "valid JSON (%)": 100.0,
    "schema-valid (%)": 100.0,
    "executable (%)": 100.0,
    "mode macro-F1 (%)": 100.0,
    "exact match (%)": 74.75,
}
FIRST_DECODES = ("valid JSON (%)", "schema-valid (%)", "executable (%)")
LOSSES = ("orbit", "field")  # a stage-two update's other losses (its history also counts refused pairs)


def first_decode_shares(records: pd.DataFrame) -> dict[str, float]:
    """The shares (%) of first decodes that were JSON, that were the record's schema (whatever the
    local view then refused), and that were executable as they stood (the ladder's codes)."""
    codes = records["first_code"].astype(object).where(records["first_code"].notna(), None).tolist()
    count = max(len(codes), 1)
    return {
        "valid JSON (%)": 100 * sum(c != "json" for c in codes) / count,
        "schema-valid (%)": 100 * sum(c is None or c in REFUSALS for c in codes) / count,
        "executable (%)": 100 * sum(c is None for c in codes) / count,
    }


def students_table(test: pd.DataFrame, students: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """A row per student on the test views against the teacher's records (the teacher's own first: its
    modes), then the paper's."""
    teacher = pd.DataFrame({"rung": "executable", "record": test["record"].to_numpy()}, index=test.index)
    scored = evaluate(test, {TEACHER: teacher, **students}, reference=TEACHER)
    scored = scored.rename(columns={"controller": "student"})
    shares = pd.DataFrame([{"student": name, **first_decode_shares(r)} for name, r in students.items()])
    table = scored.drop(columns="executable (%)").merge(shares, on="student", how="left")
    columns = ["student", "views", *FIRST_DECODES, "mode macro-F1 (%)", "exact match (%)"]
    rest = [c for c in table.columns if c not in columns]
    table = pd.concat([table[columns + rest], pd.DataFrame([PAPER])], ignore_index=True)
    counts = ["views", *RUNGS]  # whole numbers (none in the paper's row)
    return table.astype({column: "Int64" for column in counts})


def corpus_wide(acceptance: pd.DataFrame) -> pd.DataFrame:
    """The corpus table as the page shows it: a row per substrate and class, the views of each split,
    and the share of the teacher's records accepted over all of them."""
    views = acceptance.pivot_table(index=["suite", "situation"], columns="split", values="views", aggfunc="sum")
    views = views.reindex(columns=[s for s in ("train", "validation", "test") if s in views.columns]).fillna(0)
    totals = acceptance.groupby(["suite", "situation"])[["views", "accepted"]].sum()
    wide = views.astype(int).assign(**{"accepted (%)": 100 * totals["accepted"] / totals["views"]})
    wide.columns.name = None
    return wide.reset_index()


def losses(manifests: dict[int, dict[str, Any]]) -> pd.DataFrame:
    """Every seed's losses: (seed, update, split, loss), the train loss per update and the validation
    decision loss per checkpoint, and a stage-two training's orbit and field losses (unweighted: an
    arm's disabled losses are computed too) per update as splits of their own."""
    rows = []
    for seed, manifest in manifests.items():
        for split, history in manifest["history"].items():
            if split == "auxiliary":
                rows += [
                    (seed, update, name, loss)
                    for update, named in history
                    for name, loss in named.items()
                    if name in LOSSES
                ]
            else:
                rows += [(seed, update, split, loss) for update, loss in history]
    return pd.DataFrame(rows, columns=["seed", "update", "split", "loss"])


def loss_chart(curves: pd.DataFrame, selected: pd.DataFrame) -> alt.LayerChart:
    """Loss against update, a line per seed and split; the selected checkpoint of each seed marked."""
    lines = (
        alt.Chart(curves)
        .mark_line(point=alt.OverlayMarkDef(size=12))
        .encode(
            x=alt.X("update:Q", title="update"),
            y=alt.Y("loss:Q", title="decision loss (mean over answer tokens)", scale=alt.Scale(zero=False)),
            color=alt.Color("split:N"),
            detail="seed:N",
            tooltip=["seed", "update", "split", alt.Tooltip("loss:Q", format=".4f")],
        )
    )
    marks = (
        alt.Chart(selected)
        .mark_point(shape="diamond", size=90, filled=True, color="black")
        .encode(x="update:Q", y="loss:Q", tooltip=["seed", "update", alt.Tooltip("loss:Q", format=".4f")])
    )
    return (lines + marks).properties(width=560, height=300, title="Training and validation decision loss")


def render(
    training: str,
    manifests: dict[int, dict[str, Any]],
    acceptance: pd.DataFrame,
    students: pd.DataFrame | None,
    out: Path,
    diagnostics: pd.DataFrame | None = None,
) -> Path:
    """Write the report's tables, chart and page (`out/index.html`)."""
    out.mkdir(parents=True, exist_ok=True)
    curves = losses(manifests)
    selected = pd.DataFrame(
        [(s, m["selected_update"], m["validation_loss"]) for s, m in manifests.items()],
        columns=["seed", "update", "loss"],
    )
    decision = curves[curves["split"].isin(["train", "validation"])]
    save_chart(loss_chart(decision, selected), out, "losses")
    curves.to_csv(out / "losses.csv", index=False, float_format="%.6g")
    write_tables(acceptance, out, "corpus")
    first = next(iter(manifests.values()))
    about = {
        "base model": first["base_model"],
        "base revision": first["base_revision"],
        "seeds": ", ".join(map(str, manifests)),
        "updates": first["updates"],
        "selected (update, validation loss)": "; ".join(
            f"seed {s}: {m['selected_update']}, {m['validation_loss']:.4f}" for s, m in manifests.items()
        ),
    }
    parts = [
        f"<h1>Training {html.escape(training)}</h1>",
        html_table(pd.DataFrame([about])),
        "<h2>Loss</h2>",
        '<p><img src="losses.png" alt="loss curves" width="640"> (<a href="losses.html">interactive</a>, '
        '<a href="losses.csv">losses.csv</a>)</p>',
        "<h2>Corpus</h2>",
        "<p>Views per substrate, situation class and split, and the share of the teacher's records "
        "accepted (the validator on the view alone).</p>",
        html_table(corpus_wide(acceptance)),
        table_links("", "corpus"),
        "<h2>The student on the test views</h2>",
    ]
    if students is None:
        parts.append("<p>The corpus holds no test bundles (its synthetic parts' <code>test</code>: 0).</p>")
    else:
        write_tables(students, out, "students")
        parts += [
            "<p>First decodes (greedy) on the held-out test views against the teacher's records: the "
            "teacher's own row (its modes), the untrained base model (a stage-two arm's: in its warm start's "
            "report), then each seed's adapter; the last "
            "row is the paper's (a Qwen3-4B-Instruct-2507 student of GPT-4o's records on 800 views).</p>",
            html_table(students),
            table_links("", "students"),
        ]
    if diagnostics is not None:
        write_tables(diagnostics, out, "diagnostics")
        parts += [
            "<h2>Structural diagnostics</h2>",
            "<p>Each seed's deployed adapter on data no training or selection saw: orbit agreement (the share "
            "of the 12 identifier-free factors its records on a test view and on that view relabelled share) "
            "and the frozen-probe field loss (a field predictor fitted on the frozen controller's hidden "
            "states of held-out episodes, measured on others: Eq. 7, all transitions and the eventful ones). "
            "The orbit and field losses of every update are in losses.csv (splits orbit and field).</p>",
            html_table(diagnostics),
            table_links("", "diagnostics"),
        ]
    page = out / "index.html"
    page.write_text(
        f"<!doctype html><html><head><meta charset='utf-8'><title>Training {html.escape(training)}</title>"
        f"<style>{STYLE}</style></head><body>{''.join(parts)}</body></html>\n"
    )
    return page
