"""What spans the toolkit's layers: the ``vocalgrad`` command (:mod:`.cli`) and ``vocalgrad demo`` (:mod:`.demo`).

The top of the import order (docs/code-layout.md): it imports ``vocalgrad``, ``generation``,
``harness_tasks`` and ``analysis``, and no module of theirs imports it. Each layer keeps its own
sub-commands (a module with ``register_cli``); :data:`.cli.COMMAND_MODULES` lists them.
"""
