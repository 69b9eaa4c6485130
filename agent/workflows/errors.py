"""The error a workflow raises when the server does not offer the tools it needs."""


class WorkflowError(Exception):
    """A workflow cannot run against this server (one line, with the fix)."""
