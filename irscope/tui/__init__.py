"""The Textual app behind ``irscope open`` (imports Textual; the core never imports this)."""
