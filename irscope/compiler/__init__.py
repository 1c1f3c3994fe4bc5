"""The bundle's vocabulary, shared by capture, store and every reader.

The one stage registry (:mod:`.stages`), the records a capture hands the store
(:mod:`.records`), and the splitter of per-pass dump streams (:mod:`.passdump`).
Standard library only; it imports nothing of irscope but ``errors`` and ``robust``,
so every layer may use it.
"""
