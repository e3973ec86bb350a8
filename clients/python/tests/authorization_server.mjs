// A real OAuth 2 / OpenID Connect authorization server for the Python SDK's connection tests: panva's certified
// `oidc-provider` (the repository's dev dependency) on 127.0.0.1, as test/e2e/helpers/authorization-server.ts starts
// it. Its login and consent are completed by its own interaction API for the account the test's user agent names in
// the `x-test-account` header: a person signing in, without a browser. Nothing here stands in for Maitento's side.
//
//   node authorization_server.mjs REDIRECT_URI
//
// prints one JSON line, { issuer, clientId, clientSecret }, once it listens, and serves until it is terminated.
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import Provider from 'oidc-provider';

const redirectUri = process.argv[2];
if (!redirectUri) {
  process.stderr.write('usage: node authorization_server.mjs REDIRECT_URI\n');
  process.exit(2);
}

const server = createServer();
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const issuer = `http://127.0.0.1:${server.address().port}`;
const clientId = 'maitento-pytest';
const clientSecret = `as-client-secret-${randomBytes(12).toString('hex')}`;
const provider = new Provider(issuer, {
  clients: [
    {
      client_id: clientId,
      client_secret: clientSecret,
      redirect_uris: [redirectUri],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_basic',
    },
  ],
  scopes: ['openid', 'offline_access', 'calendar.read'],
  pkce: { required: () => true },
  features: { devInteractions: { enabled: false } },
  interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
  findAccount: (_ctx, id) => ({ accountId: id, claims: () => ({ sub: id }) }),
  cookies: { keys: [randomBytes(16).toString('hex')] },
});

// Signs in the account the user agent names, then grants what the client asked for.
async function interact(req, res) {
  const details = await provider.interactionDetails(req, res);
  const account = String(req.headers['x-test-account'] ?? '');
  if (details.prompt.name === 'login') {
    await provider.interactionFinished(req, res, { login: { accountId: account } }, { mergeWithLastSubmission: false });
    return;
  }
  const { params, session } = details;
  const missing = details.prompt.details;
  const grant = new provider.Grant({ accountId: session?.accountId ?? account, clientId: String(params.client_id) });
  if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
  for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes ?? {})) {
    grant.addResourceScope(indicator, scopes.join(' '));
  }
  const grantId = await grant.save();
  await provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
}

const callback = provider.callback();
server.on('request', (req, res) => {
  if (req.url?.startsWith('/interaction/')) {
    interact(req, res).catch((error) => {
      res.statusCode = 500;
      res.end(String(error));
    });
    return;
  }
  callback(req, res);
});
process.on('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
process.stdout.write(`${JSON.stringify({ issuer, clientId, clientSecret })}\n`);
