"""The one error family the CLI turns into a one-line message (no traceback)."""


class KqbenchError(Exception):
    """Bad input or a failed step, with a message that says what is wrong and how to fix it."""
