"""Retrieval as plain functions over an opened index, what each conversation was sent, and what a search call sends it: no MCP here."""
