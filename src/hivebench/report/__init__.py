"""Reports. This module stays import-light: the Snakefile reads the list of report files from it."""

LOOPBENCH_FILES = (
    "table1.csv", "table1.md", "table1.tex", "conflicts.html", "conflicts.png",
    "scores.csv", "scores.md", "scores.tex", "scaling.html", "scaling.png",
    "contrasts.csv", "contrasts.md", "contrasts.tex", "forest.html", "forest.png",
    "index.html",
)  # fmt: skip
