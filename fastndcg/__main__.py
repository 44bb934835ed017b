"""``python -m fastndcg`` runs the command line (see :mod:`fastndcg.cli`)."""

import sys

from .cli import main

sys.exit(main())
