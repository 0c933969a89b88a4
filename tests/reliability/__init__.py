"""The quick subset of the reliability harness (reliability/) that `make test` runs."""
