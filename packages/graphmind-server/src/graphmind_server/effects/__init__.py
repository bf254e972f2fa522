"""Effects on the hub side (docs/effects.md): the ledger's route (`api`), command (`command`) and
comparison (`diff`), and how an answer at an effect hold is checked and labelled (`answer`). The
ledger itself is read in store/effects.py, the one door to the database."""
