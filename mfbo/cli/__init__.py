"""The ``mfbo`` command: subcommands found through the ``mfbo.commands`` entry points
(``mfbo study`` here, ``mfbo bench``/``report``/``scale`` in the benchmarks)."""
