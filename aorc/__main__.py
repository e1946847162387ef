"""``python -m aorc``: the ``aorc`` command."""

from aorc.cli.main import main

__all__: list[str] = []

raise SystemExit(main())
