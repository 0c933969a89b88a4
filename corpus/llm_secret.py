"""Encryption of the LLM API key stored in the database, with a key derived from SECRET_KEY.

A database dump alone does not give the key away. Rotating SECRET_KEY makes a stored key
unreadable: decrypt then returns None, and staff enter the key again in the admin.
"""

from __future__ import annotations

import base64

from cryptography.fernet import Fernet, InvalidToken
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from django.conf import settings

_PURPOSE = b"ragweb: LLM API key in corpus.LLMSettings"


def _fernet() -> Fernet:
    derived = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=_PURPOSE).derive(settings.SECRET_KEY.encode())
    return Fernet(base64.urlsafe_b64encode(derived))


def encrypt(plain: str) -> str:
    """The stored form of `plain` ("" stays "": no key)."""
    return _fernet().encrypt(plain.encode()).decode() if plain else ""


def decrypt(stored: str) -> str | None:
    """The key `stored` holds ("" for none), or None when it cannot be read (SECRET_KEY changed)."""
    if not stored:
        return ""
    try:
        return _fernet().decrypt(stored.encode()).decode()
    except InvalidToken:
        return None
