"""The differential tester: the same cases through two implementations, decisions compared (`kqbench agree`).

The cases, their objects on a cluster and the comparison of decisions are the library `harness.agreeing`;
this driver is the experiment around them:
- `settings`: the scheduler settings a case needs, as `scheduler:` fields (pure);
- `phases`: AgreementPhase (`kind: agreement`): a batch of cases; `playing`: the epochs behind the cases'
  gates on a running cluster; `running`: the phase driver, emitting each epoch's decisions;
- `batching`: a batch as a one-case scenario, and its outcomes read back from that run's tables (pure);
- `differential`: batches x implementations x repeats, comparison, confirmation, summary; `shrinking`:
  minimal cases; `reporting`: the run's report.md.
`kqbench agree` (harness/cli/agree.py) is its front end: it hands `differential` a function that runs each batch's
scenario through the runner, which lists the drivers and so is never imported by one.
"""

from harness.drivers import contract
from harness.drivers.agreement import phases, running

DRIVER = contract.DriverSpec(name="agreement", phases=phases.PHASES, tables=running.TABLES, run_phase=running.run)
