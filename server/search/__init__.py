"""Retrieval as plain functions over an opened index, and what each conversation was sent: no MCP here."""
