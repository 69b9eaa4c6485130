"""`python -m arag_mcp.agent` is `arag-agent`."""

import sys

from .cli import agent_main

sys.exit(agent_main())
