"""``python -m aorc``: the ``aorc`` command."""

from aorc.cli import main

raise SystemExit(main())
