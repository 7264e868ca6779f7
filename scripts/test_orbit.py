# Snakemake `script:` for rule test_orbit: the corpus's test views relabelled, and the teacher's records
# through the same maps (hivebench.waggle.study.viewset.orbit_views, relabel).
import json

import pandas as pd

from hivebench.ids import canonical_json
from hivebench.waggle.study.viewset import orbit_views, relabel, write

with open(snakemake.log[0], "w") as log:  # noqa: F821 (injected by Snakemake)
    try:
        test = pd.read_parquet(snakemake.input[0])  # noqa: F821
        moved = orbit_views(test, snakemake.params.seed)  # noqa: F821
        maps = [{k: dict(map(tuple, m)) for k, m in json.loads(text).items()} for text in moved["maps"]]
        moved["record"] = [canonical_json(relabel(json.loads(r), m)) for r, m in zip(test["record"], maps)]
        write(moved, snakemake.output[0])  # noqa: F821
        print(f"{len(moved)} test views relabelled", file=log)
    except Exception as exc:
        print(f"hivebench test-orbit: error: {exc}", file=log)
        raise
