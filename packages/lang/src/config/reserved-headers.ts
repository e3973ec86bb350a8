// Its own module (`@maitento/lang/reserved-headers`) so that `mt import openapi` can read it without the compiler.

/**
 * Headers a header parameter may not set: credentials (a secret goes in a tool's `auth`, never in what the model
 * fills), and the ones the gateway itself writes or that frame the message.
 */
export const RESERVED_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  authorization: 'it carries a credential; give the tool an auth = { header, secret }',
  'proxy-authorization': 'it carries a credential',
  cookie: 'it carries a session',
  host: "the gateway sends the url's host",
  'content-type': 'the gateway sends the body as application/json',
  'content-length': 'the gateway frames the body',
  'transfer-encoding': 'the gateway frames the body',
  connection: 'it is a hop-by-hop header',
  'keep-alive': 'it is a hop-by-hop header',
  te: 'it is a hop-by-hop header',
  trailer: 'it is a hop-by-hop header',
  upgrade: 'it is a hop-by-hop header',
  expect: 'the gateway sends the request at once',
  'idempotency-key': 'the gateway sends one per write call',
  'user-agent': 'the gateway names itself',
  accept: 'the gateway asks for JSON',
});
