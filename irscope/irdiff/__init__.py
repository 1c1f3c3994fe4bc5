"""The structural IR diff engine: two parsed modules in, typed changes out.

It sits just above the parsers (:mod:`irscope.ir`), so the links, the core and every
view can use it; it knows nothing of bundles or captures.
"""
