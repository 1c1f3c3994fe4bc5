"""How every text reaches DOT: the two escaping functions the pictures use.

Graphviz takes text in two forms, each with its own rules:

- **HTML-like labels** (``label=<...>``, and the ``TOOLTIP``/``HREF`` attributes
  inside them): :func:`html_text`. Entities for ``& < > " '``; backslashes doubled,
  because dot expands escString sequences (``\\N``, ``\\G``, ``\\l``) in these too,
  once, after decoding entities (so ``&#92;`` would not do).
- **Quoted strings** of escString attributes (``tooltip``, ``URL``): :func:`dot_string`.
  The DOT lexer reads ``\\"`` as a quote; every further pass of escString expansion
  reads ``\\\\`` as one backslash and ``\\N``, ``\\G``, ``\\E``... as names. Graphviz
  documents one pass; the dot releases Debian and Ubuntu ship (2.42, 2.43) run two on a
  tooltip. So a backslash is doubled once per pass the installed ``dot`` runs
  (:func:`escstring_passes` asks it once), then quotes are backslash-escaped, and
  ``&`` is written ``&amp;`` (dot decodes entities in any string). No character is
  ever replaced by another: a tooltip reads back exactly as given
  (``tests/test_pictures.py`` renders one holding ``"``, ``\\22`` and ``\\N``).
"""

from __future__ import annotations

import functools
import html
import shutil
import subprocess
import xml.etree.ElementTree as ET

from .style import clean

__all__ = ["dot_string", "escstring_passes", "html_text"]

_PROBE = 'digraph{a[label="a" tooltip="\\\\\\\\"]}'  # 4 backslashes: one pass leaves 2, two leave 1
_XLINK_TITLE = "{http://www.w3.org/1999/xlink}title"


def html_text(text: object, limit: int = 0) -> str:
    """``text`` cleaned (:func:`irscope.export.style.clean`, cut to ``limit``) and made
    safe inside a Graphviz HTML-like label or one of its attributes."""
    return html.escape(clean(text, limit), quote=True).replace("\\", "\\\\")


@functools.lru_cache(maxsize=1)
def escstring_passes() -> int:
    """How many times the installed ``dot`` expands escString sequences in a
    tooltip: 1 (what Graphviz documents, and the answer when ``dot`` is missing or
    the probe fails) or 2 (Graphviz 2.42/2.43)."""
    exe = shutil.which("dot")
    if exe is None:
        return 1
    try:
        p = subprocess.run([exe, "-Tsvg"], input=_PROBE.encode(), capture_output=True, timeout=30, check=False)
        root = ET.fromstring(p.stdout)
    except (OSError, subprocess.TimeoutExpired, ET.ParseError):
        return 1
    titles = [e.get(_XLINK_TITLE) for e in root.iter() if e.get(_XLINK_TITLE) is not None]
    return 2 if titles == ["\\"] else 1


def dot_string(text: object, limit: int = 0):
    """``text`` cleaned and escaped as the value of a quoted escString attribute
    (``tooltip``, ``URL``): a ``graphviz.nohtml`` string, so the ``graphviz``
    package quotes it and never takes it for an HTML label."""
    import graphviz

    s = clean(text, limit)
    for _ in range(escstring_passes()):
        s = s.replace("\\", "\\\\")
    return graphviz.nohtml(s.replace('"', '\\"').replace("&", "&amp;"))
