# Snakemake `script:` for rule factorial_report: a warm start's stage-two arms side by side
# (hivebench.train.diagnostics.factorial_table), the page and its table.
import html
from pathlib import Path

from hivebench.report import STYLE
from hivebench.report.page import html_table, table_links, write_tables
from hivebench.train.diagnostics import PAPER, factorial_table, load

p = snakemake.params  # noqa: F821 (injected by Snakemake)
with open(snakemake.log[0], "w") as log:  # noqa: F821
    try:
        arms = {f"{name} ({p.arm_names[name]})": load(paths) for name, paths in p.arms.items()}
        named = {f"{name} ({p.arm_names[name]})": p.arm_names[name] for name in p.arms}
        reference = next((label for label, arm in named.items() if arm == "decision"), next(iter(arms)))
        report = p.report
        table = factorial_table(
            arms, reference, report["bootstrap_resamples"], report["confidence"], report["bootstrap_seed"]
        )
        out = Path(snakemake.output[0]).parent  # noqa: F821
        write_tables(table, out, "factorial")
        warm = html.escape(snakemake.wildcards.warm)  # noqa: F821
        level = round(100 * report["confidence"])
        body = (
            f"<h1>Factorial from warm start {warm}</h1><p>Each arm's deployed adapters (its training seeds paired "
            "across arms) on data no training or selection saw: orbit agreement over the 12 factors on the held-out "
            "test views and their orbit partners (%), the frozen-probe field loss on the held-out transitions (all, "
            f"eventful), means over seeds with {level}% hierarchical bootstrap intervals (training seeds, then "
            f"views or transitions, {report['bootstrap_resamples']} resamples); each arm against "
            f"{html.escape(reference)}: "
            "orbit agreement in points, the eventful probe loss's change in percent. The last row is the paper's "
            "Table 16 (Llama-3.1-8B-Instruct, Joint against Decision only, five seeds, 800 views); its behavioural "
            f"part (recovery {PAPER['recovery (points)']:+.1f} points, stale-field burden and post-conflict traffic "
            "down) is the late-counterevidence intervention's, a study of the arms' methods (its report's Waggle "
            "section).</p>" + html_table(table) + table_links("", "factorial")
        )
        (out / "index.html").write_text(
            f"<!doctype html><html><head><meta charset='utf-8'><title>Factorial {warm}</title>"
            f"<style>{STYLE}</style></head><body>{body}</body></html>\n"
        )
        print(f"{len(arms)} arms, reference {reference}", file=log)
    except Exception as exc:
        print(f"hivebench factorial-report: error: {exc}", file=log)
        raise
