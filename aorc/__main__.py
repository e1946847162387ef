"""``python -m aorc``: the ``aorc`` command."""

from aorc.cli.main import main

raise SystemExit(main())
