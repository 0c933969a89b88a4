"""The one error of web fetching: FetchError, whose `.reason` a person can read."""

from __future__ import annotations


class FetchError(Exception):
    """A page or sitemap could not be fetched, or was refused.

    `.reason` is the sentence shown to users ("HTTP 404", "too large: more than 10 MB", "refused:
    127.0.0.1 is a loopback address (...)"); `.status` is the final HTTP status when the server
    answered (404 and 410 tell a sync the page is gone), else None; `.url` the URL that failed.
    """

    def __init__(self, reason: str, *, url: str = "", status: int | None = None):
        super().__init__(reason)
        self.reason = reason
        self.url = url
        self.status = status

    @property
    def gone(self) -> bool:
        """The server says the page does not exist (404 or 410): a sync removes its document."""
        return self.status in (404, 410)
