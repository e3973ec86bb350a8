// A calendar service on your own machine, for tutorial 07: its sign-in (an OAuth 2 / OpenID Connect authorization
// server, panva's certified `oidc-provider`) and its API (each person's calendar, for their access token only).
// It stands in for Google or Microsoft: one process, one port, http://127.0.0.1:4000 (PORT changes it).
//
//   node calendar-provider.ts                      starts it (CALENDAR_CLIENT_SECRET: the client secret Maitento uses;
//                                                  MAITENTO_URL: the server, http://127.0.0.1:8080 by default)
//   node calendar-provider.ts sign-in URL NAME     your browser's part: opens a connect URL, signs in as NAME,
//                                                  allows the access, and follows the way back to Maitento
//
// Run it from the clone (after `npm install` there): `oidc-provider` is one of the clone's dev dependencies.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import Provider from 'oidc-provider';

const port = Number(process.env.PORT ?? 4000);
const issuer = `http://127.0.0.1:${port}`;

// Each person's calendar; anyone else signing in has an empty one.
const calendars: Record<string, { start: string; title: string }[]> = {
  ada: [
    { start: '09:30', title: 'Stand-up with the platform team' },
    { start: '14:00', title: 'Dentist' },
  ],
  grace: [{ start: '11:00', title: 'Compiler review' }],
};

function page(res: ServerResponse, status: number, html: string): void {
  res.writeHead(status, { 'content-type': 'text/html; charset=utf-8' });
  res.end(`<!doctype html><title>Calendar sign-in</title>${html}`);
}

async function form(req: IncomingMessage): Promise<URLSearchParams> {
  let body = '';
  for await (const chunk of req) body += chunk;
  return new URLSearchParams(body);
}

function serve(): void {
  const redirectUri = `${process.env.MAITENTO_URL ?? 'http://127.0.0.1:8080'}/v1/connections/callback`;
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: 'calendar-agent',
        client_secret: process.env.CALENDAR_CLIENT_SECRET ?? 'calendar-agent-secret',
        redirect_uris: [redirectUri],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
      },
    ],
    scopes: ['openid', 'offline_access', 'calendar.read'],
    pkce: { required: () => true },
    features: { devInteractions: { enabled: false }, revocation: { enabled: true } },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    findAccount: (_ctx, id) => ({ accountId: id, claims: () => ({ sub: id }) }),
    cookies: { keys: ['tutorial-cookie-key'] },
  });
  const oidc = provider.callback();

  // The sign-in and consent pages: a name to sign in as (no password: a demo), then Allow.
  async function interaction(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const details = await provider.interactionDetails(req, res);
    const uid = details.uid;
    if (req.method === 'GET' && details.prompt.name === 'login') {
      return page(
        res,
        200,
        `<form method="post" action="/interaction/${uid}/login"><label>Sign in as <input name="login" autofocus></label> <button>Sign in</button></form>`,
      );
    }
    if (req.method === 'GET') {
      const scopes = String(details.params.scope ?? '');
      return page(
        res,
        200,
        `<p>Maitento asks to read your calendar (${scopes}).</p><form method="post" action="/interaction/${uid}/consent"><button>Allow</button></form>`,
      );
    }
    if (req.url?.endsWith('/login')) {
      const login = (await form(req)).get('login')?.trim() ?? '';
      if (login === '') return page(res, 400, '<p>Type a name.</p>');
      await provider.interactionFinished(req, res, { login: { accountId: login } }, { mergeWithLastSubmission: false });
      return;
    }
    // Allow: grant what Maitento asked for.
    const missing = details.prompt.details as { missingOIDCScope?: string[] };
    const grant = new provider.Grant({
      accountId: details.session?.accountId,
      clientId: String(details.params.client_id),
    });
    if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
    const grantId = await grant.save();
    console.log(`${details.session?.accountId} allowed Maitento to read their calendar`);
    await provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
  }

  // The API: the calendar of the person whose live access token comes with the request, if it may read calendars.
  async function api(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const json = (status: number, value: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(value));
    };
    const bearer = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1] ?? '';
    const token = bearer === '' ? undefined : await provider.AccessToken.find(bearer);
    if (token === undefined || token.isExpired) {
      console.log(`calendar API: ${req.method} ${req.url} refused, no live access token`);
      res.setHeader('www-authenticate', 'Bearer error="invalid_token"');
      return json(401, { error: 'invalid_token' });
    }
    if (
      !String(token.scope ?? '')
        .split(' ')
        .includes('calendar.read')
    ) {
      return json(403, { error: 'insufficient_scope', scope: 'calendar.read' });
    }
    const person = String(token.accountId);
    console.log(`calendar API: ${req.method} ${req.url} for ${person}`);
    json(200, { owner: person, day: 'today', events: calendars[person] ?? [] });
  }

  createServer((req, res) => {
    const handler = req.url?.startsWith('/interaction/')
      ? interaction
      : req.url?.startsWith('/calendar/')
        ? api
        : undefined;
    if (handler === undefined) return oidc(req, res);
    handler(req, res).catch((error: unknown) => page(res, 500, `<p>${String(error)}</p>`));
  }).listen(port, '127.0.0.1', () => {
    console.log(`calendar sign-in and API listening on ${issuer} (Maitento's callback: ${redirectUri})`);
  });
}

// The browser's part: follows redirects with the cookies each site sets, fills in the two forms, and stops once
// Maitento's callback has answered.
async function signIn(url: string, name: string): Promise<void> {
  const cookies = new Map<string, Map<string, string>>();
  let next = new URL(url);
  let body: string | undefined;
  for (let hop = 0; hop < 20; hop++) {
    const jar = cookies.get(next.origin) ?? new Map<string, string>();
    cookies.set(next.origin, jar);
    const res = await fetch(next, {
      method: body === undefined ? 'GET' : 'POST',
      redirect: 'manual',
      headers: {
        cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; '),
        ...(body === undefined ? {} : { 'content-type': 'application/x-www-form-urlencoded' }),
      },
      body,
      signal: AbortSignal.timeout(10_000),
    });
    body = undefined;
    for (const line of res.headers.getSetCookie()) {
      const [pair = ''] = line.split(';');
      const at = pair.indexOf('=');
      jar.set(pair.slice(0, at).trim(), pair.slice(at + 1).trim());
    }
    const location = res.headers.get('location');
    if (location !== null) {
      next = new URL(location, next);
      continue;
    }
    const text = await res.text();
    if (next.pathname.endsWith('/v1/connections/callback')) {
      console.log(
        `Maitento answered ${res.status}: ${text
          .replace(/<[^>]+>/g, ' ')
          .replace(/\s+/g, ' ')
          .trim()}`,
      );
      if (res.status !== 200) process.exitCode = 1;
      return;
    }
    const action = /<form method="post" action="([^"]+)"/.exec(text)?.[1];
    if (res.status !== 200 || action === undefined) throw new Error(`stopped at ${next.href} (${res.status}): ${text}`);
    // The sign-in page asks for a name; the consent page for a click on Allow.
    body = action.endsWith('/login') ? new URLSearchParams({ login: name }).toString() : '';
    next = new URL(action, next);
  }
  throw new Error('did not come back to Maitento in 20 steps');
}

if (process.argv[2] === 'sign-in') {
  const [url, name] = process.argv.slice(3);
  if (url === undefined || name === undefined) {
    console.error('usage: node calendar-provider.ts sign-in CONNECT_URL NAME');
    process.exit(2);
  }
  await signIn(url, name);
} else {
  serve();
}
