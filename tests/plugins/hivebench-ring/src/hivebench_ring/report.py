"""The ring's report section: the mean agreement of each method at each N."""

from __future__ import annotations

from hivebench.report import Section


def render(section: Section) -> str:
    table = section.episodes.groupby(["task", "method", "population"], as_index=False)["agreement"].mean()
    note = "<p>Mean agreement (the share of agents on the final majority bit).</p>"
    return f"<h2>Ring</h2>\n{note}\n{table.to_html(index=False)}"
