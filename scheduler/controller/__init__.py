"""The controller: list/watch Kueue objects into the core, write its decisions through status."""
