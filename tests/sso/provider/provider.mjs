// A real OpenID Connect provider (panva's oidc-provider, the certified one) for ragweb's sign-in tests.
// Test-only: dev interactions (any password), dev signing keys, everything in memory.
//
// Environment (set by tests/sso/provider.py):
//   OIDC_TEST_PORT      port on 127.0.0.1 (issuer http://127.0.0.1:PORT)
//   OIDC_TEST_CLIENT    JSON: {client_id, client_secret, redirect_uris, post_logout_redirect_uris}
//   OIDC_TEST_ACCOUNTS  path of a JSON file {accountId: {claims...}}, read on every look-up, so a
//                       test changes a user's groups between two sign-ins by rewriting it.
import { readFileSync } from 'node:fs';
import Provider from 'oidc-provider';

const port = Number(process.env.OIDC_TEST_PORT);
const issuer = `http://127.0.0.1:${port}`;
const client = JSON.parse(process.env.OIDC_TEST_CLIENT);

const provider = new Provider(issuer, {
  clients: [{ ...client, grant_types: ['authorization_code'], response_types: ['code'] }],
  claims: {
    openid: ['sub'],
    email: ['email', 'email_verified'],
    profile: ['name', 'given_name', 'family_name', 'preferred_username'],
    groups: ['groups'],
  },
  features: { devInteractions: { enabled: true }, rpInitiatedLogout: { enabled: true } },
  cookies: { keys: ['test-only-cookie-key'] },
  async findAccount(ctx, id) {
    const accounts = JSON.parse(readFileSync(process.env.OIDC_TEST_ACCOUNTS, 'utf8'));
    if (!Object.hasOwn(accounts, id)) return undefined;
    return { accountId: id, async claims() { return { sub: id, ...accounts[id] }; } };
  },
});

provider.listen(port, '127.0.0.1', () => {
  console.log(`oidc-provider listening on ${issuer}`);
});
