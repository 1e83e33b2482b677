"""The differential tester's library: its cases (`cases`, `generating`, `lifecycles`), their objects on a
cluster (`rendering`, `driving`, `observing`, `readying`, `timing`), the decisions read back and compared
(`decisions`, `comparing`), and the in-process replays (`simulating`, `replaying`, `topologyplacements`).
The experiment that runs them is the `agreement` driver (harness/drivers/agreement)."""
