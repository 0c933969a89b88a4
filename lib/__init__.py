"""Shared helpers and process plumbing below every app: reading the environment, parsing numbers,
forking, the gunicorn worker, memory tools and process names. Imports no project package."""
