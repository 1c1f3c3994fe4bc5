"""The one exception type the command line turns into a one-line error."""


class IrscopeError(Exception):
    """A user-facing failure: bad input, unreadable bundle, failed tool.

    The CLI prints ``error: <message>`` and exits non-zero; never a traceback.
    """
