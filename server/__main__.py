"""`python -m arag_mcp.server` runs the arag-mcp command."""

import sys

from .cli import main

sys.exit(main())
