"""`python -m arag_mcp.indexer` runs the arag-index command."""

import sys

from .cli import main

sys.exit(main())
