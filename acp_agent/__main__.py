"""`python -m acp_agent` is the same as the `acp-agent` console script."""

from acp_agent.cli import main

raise SystemExit(main())
