"""``python -m kforge`` runs the command line."""

from __future__ import annotations

import sys

from kforge.cli import main

sys.exit(main())
