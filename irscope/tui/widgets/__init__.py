"""Widgets of the irscope app, grouped by the screen area they fill."""
