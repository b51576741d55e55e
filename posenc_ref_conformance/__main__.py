"""``python -m posenc_ref_conformance``: the same as the ``posenc-ref`` command."""

import sys

from .cli import main

sys.exit(main())
