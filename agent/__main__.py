"""`python -m arag_mcp.agent` is `arag-agent`."""

import sys

from .launch import agent_main

sys.exit(agent_main())
