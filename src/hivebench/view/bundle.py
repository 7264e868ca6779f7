"""The Vega, Vega-Lite and Vega-Embed JavaScript that episode pages and the report's interactive plots
inline, from vl-convert. Light on purpose: every report job imports it, and nothing else of the viewer."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import vl_convert

# vl-convert builds its ~1 MB bundle in about two seconds, and altair asks for it again for every chart
# it saves inline (the report's interactive plots): each bundle is built once a process, and the one
# the workflow wrote for every job (use_vega_bundle) is read instead of built.
_build_bundle = vl_convert.javascript_bundle
_bundles: dict[tuple[str | None, str], str] = {}


def _vegalite(version: str | None) -> str:
    """A Vega-Lite version as one key however it is written ("v6_4", "6.4"; None: vl-convert's latest)."""
    return (version or vl_convert.get_vegalite_versions()[-1]).lstrip("v").replace("_", ".")


def javascript_bundle(snippet: str | None = None, vl_version: str | None = None) -> str:
    """vl_convert.javascript_bundle, built once per (snippet, Vega-Lite version) a process."""
    key = (snippet, _vegalite(vl_version))
    if key not in _bundles:
        _bundles[key] = _build_bundle(snippet, vl_version=vl_version)
    return _bundles[key]


vl_convert.javascript_bundle = javascript_bundle  # altair calls it through the module


def use_vega_bundle(path: str | Path) -> None:
    """Take the default bundle from `path` (a file vega_bundle() wrote, for this vl-convert: the rule
    vega_bundle's) instead of building it: what script_safe changed there means the same script."""
    _bundles[(None, _vegalite(None))] = Path(path).read_text(encoding="utf-8")


@cache
def vega_bundle() -> str:
    """Vega, Vega-Lite and Vega-Embed as one script (window.vegaEmbed), safe inside a <script> element."""
    return script_safe(javascript_bundle())


def script_safe(text: str) -> str:
    """Script text to place inside a <script> element: a "</script" (which would end the element) or
    "<!--" written with an escaped character, which means the same in a JavaScript string or regex."""
    return re.sub("</(script)", r"<\\/\1", text, flags=re.IGNORECASE).replace("<!--", "<\\!--")
