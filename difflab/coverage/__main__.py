"""``python -m difflab.coverage``: print, write or check the PyTorch coverage page."""

import sys

from difflab.coverage import main

sys.exit(main())
