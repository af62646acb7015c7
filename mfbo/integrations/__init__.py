"""Bridges to other tools' vocabularies (each module imports its tool only when used)."""
