"""A real OpenID Connect provider for the sign-in tests: panva's `oidc-provider` (npm, pinned in
tests/sso/provider/package-lock.json) run by node with tests/sso/provider/provider.mjs.

`npm ci` installs it into tests/sso/provider/node_modules the first time (from the npm registry);
after that the tests need no network."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import requests

HERE = Path(__file__).resolve().parent / "provider"
CLIENT_ID = "ragweb-test"
CLIENT_SECRET = "test-client-secret-not-for-production"


def install() -> None:
    """node_modules from the lock file, once (a lock file of its own guards two test runs at once)."""
    installed = HERE / "node_modules" / ".package-lock.json"  # npm writes it last
    if installed.exists():
        return
    npm = shutil.which("npm")
    if npm is None:
        raise RuntimeError("npm is missing: the sign-in tests run a real OpenID provider on node (apt-get install npm)")
    with open(HERE / ".install.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not installed.exists():
            subprocess.run([npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=HERE, check=True,
                           timeout=300)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Provider:
    issuer: str
    accounts_file: Path
    process: subprocess.Popen

    def set_account(self, account_id: str, **claims) -> None:
        """The claims `account_id` gets from now on (the provider reads the file on every look-up)."""
        accounts = json.loads(self.accounts_file.read_text())
        accounts[account_id] = claims
        self.accounts_file.write_text(json.dumps(accounts))


def start(tmp_path: Path, *, app_base_url: str) -> Provider:
    """The provider on a free port, with ragweb at `app_base_url` registered as its client."""
    install()
    port = free_port()
    accounts = tmp_path / "accounts.json"
    accounts.write_text("{}")
    client = {"client_id": CLIENT_ID, "client_secret": CLIENT_SECRET, "client_name": "ragweb",
              "redirect_uris": [f"{app_base_url}/oidc/callback/"],
              "post_logout_redirect_uris": [f"{app_base_url}/login/"]}
    env = {**os.environ, "OIDC_TEST_PORT": str(port), "OIDC_TEST_CLIENT": json.dumps(client),
           "OIDC_TEST_ACCOUNTS": str(accounts)}
    log = open(tmp_path / "provider.log", "w")  # noqa: SIM115 (the process writes it until stop)
    process = subprocess.Popen(["node", str(HERE / "provider.mjs")], env=env, stdout=log, stderr=subprocess.STDOUT)
    issuer = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while True:
        try:
            if requests.get(f"{issuer}/.well-known/openid-configuration", timeout=2).ok:
                return Provider(issuer, accounts, process)
        except (requests.ConnectionError, requests.Timeout):  # not listening yet, or slow on a loaded machine
            pass
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            raise RuntimeError(f"the OpenID provider did not start: {(tmp_path / 'provider.log').read_text()}")
        time.sleep(0.2)


def stop(provider: Provider) -> None:
    provider.process.terminate()
    try:
        provider.process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        provider.process.kill()


def use(settings, provider: Provider, **extra) -> None:
    """Point ragweb (pytest-django's `settings`) at the provider, as the OIDC_* variables would."""
    from sso import discovery

    settings.OIDC_ISSUER = provider.issuer
    settings.OIDC_RP_CLIENT_ID = CLIENT_ID
    settings.OIDC_RP_CLIENT_SECRET = CLIENT_SECRET
    settings.AUTHENTICATION_BACKENDS = ["django.contrib.auth.backends.ModelBackend", "sso.backend.OidcBackend"]
    # As settings.py does for OIDC_ISSUER: sign-out's form is redirected to the provider.
    settings.CONTENT_SECURITY_POLICY = settings.CONTENT_SECURITY_POLICY.replace(
        "form-action 'self'", f"form-action 'self' {provider.issuer}")
    for name, value in extra.items():
        setattr(settings, name, value)
    discovery.forget()
