"""Server failures told truthfully: each unexpected error is logged with a short id that the
message shown to the user repeats, so a report ("error 3f9c2a17") leads to the log entry."""

from __future__ import annotations

import logging
import secrets


def new_error_id() -> str:
    return secrets.token_hex(4)


def log_failure(logger: logging.Logger, what: str, *args) -> str:
    """Log the exception being handled (with `what` % `args`) under a new error id; returns the id."""
    error_id = new_error_id()
    logger.exception(f"{what} [error %s]", *args, error_id)
    return error_id


def server_failure_message(error_id: str) -> str:
    return (f"The server failed while answering (error {error_id}). Please try again; if it keeps "
            f"failing, tell your administrator the error id.")
