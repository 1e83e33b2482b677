"""The schedulers under test (the reference scheduler and real Kueue), started one way, found through
`registry` by implementation name; each implements `contract` and imports nothing else of this package
but `names` (their names, spelled once)."""
