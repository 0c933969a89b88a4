"""Sources: web pages, sites and server folders that a collection keeps in sync (issue 29).

Layering: above corpus (documents are created, updated and removed through corpus.services'
one ingestion path), below chat and api (import-linter: sources never imports them, corpus never
imports sources).
"""
