"""The bundle's server: arag-mcp, installed by uv from pyproject.toml, set up by the manifest's environment."""

import sys

from arag_mcp.server.cli import main

sys.exit(main())
