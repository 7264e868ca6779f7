"""Reports. This module stays import-light: the Snakefile reads the lists of report files from it.

A study's report folder holds the files every study gets (scores, contrasts, index.html) and one
subfolder per suite the study runs, with that suite's section (`Suite.report_files` and the HTML
fragment `section.html` that index.html embeds).
"""

COMMON_FILES = (
    "scores.csv", "scores.md", "scores.tex", "scaling.html", "scaling.png",
    "contrasts.csv", "contrasts.md", "contrasts.tex", "forest.html", "forest.png",
    "index.html",
)  # fmt: skip
SECTION_FILE = "section.html"


def section_files(suite: str, files: tuple[str, ...]) -> list[str]:
    """A suite's section files, as paths inside a study's report folder."""
    return [f"{suite}/{name}" for name in (*files, SECTION_FILE)]
