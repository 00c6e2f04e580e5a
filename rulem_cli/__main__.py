"""`python -m rulem_cli`: the same as the `rulem-db` command."""

import sys

from rulem_cli.main import main

sys.exit(main())
