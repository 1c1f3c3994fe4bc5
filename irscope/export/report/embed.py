"""How data rides inside a report page: JSON in ``<script type="application/json">``
made safe for HTML, and big texts gzip-compressed and base64-encoded (the page
inflates them with the browser's ``DecompressionStream``), so a report opens from
``file://`` with no server and no ``fetch``."""

from __future__ import annotations

import base64
import gzip
import html
import json

_UNSAFE = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def script_json(obj) -> str:
    """``obj`` as JSON that can sit inside a ``<script>`` element: ``<``, ``>`` and
    ``&`` are written as ``\\u`` escapes, so no ``</script>`` or ``<!--`` in any IR
    string can end the element early. ASCII only: lone surrogates from undecodable
    bytes stay escapes instead of failing the write."""
    text = json.dumps(obj, ensure_ascii=True, separators=(",", ":"))
    for ch, esc in _UNSAFE.items():
        text = text.replace(ch, esc)
    return text


def json_block(element_id: str, obj) -> str:
    """A ``<script type="application/json" id=...>`` element holding ``obj``."""
    return (f'<script type="application/json" id="{html.escape(element_id, quote=True)}">'
            f"{script_json(obj)}</script>")


def pack(text: str) -> str:
    """``text`` gzip-compressed, then base64 (ASCII, safe anywhere in a page)."""
    raw = text.encode("utf-8", "replace")
    return base64.b64encode(gzip.compress(raw, compresslevel=9, mtime=0)).decode("ascii")


def pack_json(obj) -> str:
    """``obj`` as JSON, packed (see :func:`pack`)."""
    return pack(json.dumps(obj, ensure_ascii=True, separators=(",", ":")))


def unpack(data: str) -> str:
    """The inverse of :func:`pack` (tests, and anyone reading a report back)."""
    return gzip.decompress(base64.b64decode(data)).decode("utf-8")


def esc(value) -> str:
    """Any value as HTML text (quotes escaped too, so it is safe in attributes)."""
    return html.escape("" if value is None else str(value), quote=True)
