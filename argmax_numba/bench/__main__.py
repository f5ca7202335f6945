"""``python -m argmax_numba.bench``."""

import sys

from .cli import main

sys.exit(main())
