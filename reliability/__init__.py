"""`make reliability`: the reliability, security and load harness (python -m reliability).

Not production code. It starts the app the way `make run` does, with its own ports and data folder,
and prints a summary table; tests/reliability/test_*.py run a quick subset of each kind in `make test`.
"""
