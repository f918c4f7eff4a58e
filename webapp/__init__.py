"""Battleboard's web layer: the authority that validates, locks, persists, projects and broadcasts.

This package's ``__init__`` imports nothing heavy, so ``python -m webapp`` can bootstrap a fresh
checkout with the standard library alone. The app lives in :mod:`webapp.app`.
"""
