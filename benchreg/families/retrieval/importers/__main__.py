"""`python -m benchreg.families.retrieval.importers <source> --src ... --out ...`."""

import sys

from benchreg.families.retrieval.importers import main

sys.exit(main())
