"""``python -m tgbhub.cli``: the ``tgbhub`` command."""

from tgbhub.cli.app import main

raise SystemExit(main())
