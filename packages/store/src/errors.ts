import { defineErrors } from '@maitento/errors';

/** Errors of the store: namespaces, keys, secrets, versions and deploys. */
export const storeErrors = defineErrors({
  'api:namespaces:exists': { status: 409, message: 'A namespace named {name} already exists' },
  'api:namespaces:not-found': { status: 404, message: 'No namespace named {name}' },
  'api:quota:runs-exceeded': {
    status: 429,
    message:
      'Namespace {namespace} has started its {quota} runs of the day (UTC day, {used} so far); it may start another in {seconds} s',
    hint: 'Wait for the next UTC day, or ask the operator to raise the quota (PUT /v1/namespaces/{namespace}/quotas)',
  },
  'api:quota:tool-calls-exceeded': {
    status: 429,
    message:
      'Namespace {namespace} has made its {quota} tool calls of the day (UTC day, {used} so far): the call was not made; calls are admitted again in {seconds} s',
    hint: 'Answer without calling tools, or wait for the next UTC day; the operator sets the quota (PUT /v1/namespaces/{namespace}/quotas)',
  },
  'api:quota:tokens-exceeded': {
    status: 429,
    message:
      'Namespace {namespace} has spent its {quota} model tokens of the month (UTC month, {used} so far); more are admitted in {seconds} s',
    hint: 'Wait for the next UTC month, or ask the operator to raise the quota (PUT /v1/namespaces/{namespace}/quotas)',
  },
  'api:audit:cursor-invalid': {
    status: 422,
    message: 'The cursor {cursor} is not one this API gave out',
    hint: 'Pass the nextCursor of the previous page unchanged, or no cursor for the first page',
  },
  'api:audit:time-invalid': {
    status: 422,
    message: '{name} is {value}, which is no time',
    hint: 'Give an ISO 8601 time with its offset, for example 2026-12-01T00:00:00Z',
  },
  'api:webhooks:not-found': { status: 404, message: 'No webhook endpoint with id {id} in this namespace' },
  'api:keys:not-found': { status: 404, message: 'No API key with id {id} in this namespace' },
  'api:secrets:exists': {
    status: 409,
    message: 'A secret named {name} already exists in this namespace',
    hint: 'Rotate it with PUT /v1/secrets/:id instead',
  },
  'api:secrets:key-missing': {
    status: 500,
    message: 'MT_SECRET_KEY is not set; it is required with DATABASE_URL',
    hint: 'Set MT_SECRET_KEY to 32 random bytes in base64 or hex, for example `openssl rand -base64 32`',
  },
  'api:secrets:key-invalid': {
    status: 500,
    message: '{variable} must be 32 bytes in base64 or hex; it decodes to {length} bytes',
    hint: 'Generate one with `openssl rand -base64 32`',
  },
  'api:secrets:decrypt-failed': {
    status: 500,
    message: 'Secret {id} could not be decrypted: {reason}',
    hint: 'A stored secret was changed outside Maitento, or the server runs with other keys than it was stored under; set it again with `mt secret-rotate`',
  },
  'api:secrets:key-id-missing': {
    status: 500,
    message: 'Stored secrets are encrypted under master key {keyId}, which this server was not given (it has {given})',
    hint: 'Give that key as MT_SECRET_KEY_PREVIOUS (or MT_SECRET_KEY) and finish the rotation with `mt secret-key-rotate`',
  },
  'api:auth-providers:not-found': {
    status: 404,
    message: 'No auth provider {name}{version} in this namespace{suggestion}',
  },
  'api:connections:not-found': { status: 404, message: 'No connection {id} in this namespace' },
  'api:connections:link-unknown': {
    status: 400,
    message: 'The state of this callback names no connect link: it was changed, or the link was never made here',
    hint: 'Ask for a new connect link (POST /v1/connections/links) and open its URL',
  },
  'api:connections:link-used': {
    status: 400,
    message: 'This connect link was used already; a link connects once',
    hint: 'Ask for a new connect link (POST /v1/connections/links) and open its URL',
  },
  'api:connections:link-expired': {
    status: 400,
    message: 'This connect link expired before the authorisation came back',
    hint: 'Ask for a new connect link (POST /v1/connections/links) and open its URL within 10 minutes',
  },
  'api:connectors:not-found': { status: 404, message: 'No connector {name}{version} in this namespace' },
  'api:extops:not-found': { status: 404, message: 'No tool {name}{version} in this namespace{suggestion}' },
  'api:connectors:version-disabled': {
    status: 409,
    message: 'Version {version} of connector {name} is disabled; calls pinned to it are refused',
    hint: 'Enable it with `mt connector-version-enable {name} {version}`, or deploy a new version',
  },
  'api:extops:version-disabled': {
    status: 409,
    message: 'Version {version} of tool {name} is disabled; calls pinned to it are refused',
    hint: 'Enable it with `mt extop-version-enable {name} {version}`, or deploy a new version',
  },
  'api:deploy:reference-missing': {
    status: 422,
    message: '{kind} {name} references {refKind} {refName}, which is neither in the deploy nor in the namespace',
  },
  'api:resources:pinned': {
    status: 409,
    message: '{kind} {name} is pinned by run {run}{more}, which has not ended; it cannot be deleted until then',
    hint: 'Wait for the run to end (or cancel it with `mt interaction-cancel {run}`), then delete again',
  },
  'api:resources:referenced': {
    status: 409,
    message: '{kind} {name} is used by {refKind} {refName}, whose latest version pins it',
    hint: 'Deploy {refKind} {refName} without the reference, or delete it first',
  },
  'api:deploy:unstorable-text': {
    status: 422,
    message:
      '{kind} {name} holds a NUL character (\\u0000) or a lone surrogate (\\ud800-\\udfff), which cannot be stored',
    hint: 'Remove that escape (or byte) from the file: text must be valid Unicode without NUL',
  },
  'api:knowledge:not-found': {
    status: 404,
    message: 'No knowledge base {id} in this namespace',
    hint: 'List them with `mt kb-list`; a knowledge base of another namespace is not visible here',
  },
  'api:knowledge:exists': {
    status: 409,
    message: 'A knowledge base named {name} already exists in this namespace',
  },
  'api:knowledge:language-unknown': {
    status: 400,
    message: 'No text search language {language} on this database; it has: {known}',
    hint: 'Leave language out for english, or name one of the listed ones',
  },
  'api:knowledge:document-not-found': {
    status: 404,
    message: 'No document {id} in knowledge base {knowledgeBase}',
  },
  'api:store:data-locked': {
    status: 409,
    message: 'The data folder {dir} is in use by another Maitento process (pid {pid}, lock file {file})',
    hint: 'An embedded (PGlite) database serves one process: stop the other one (or delete the lock file if no such process runs), or use DATABASE_URL for several',
  },
  'api:store:migrations-pending': {
    status: 503,
    message: 'The database is not migrated for this release: {pending}',
    hint: 'Run `mt migrate` as the role that owns the schema, then start this process again (with MT_MIGRATE=off a process never migrates; docs/operations.md, "Upgrades")',
  },
  'api:store:schema-newer': {
    status: 500,
    message:
      'The database schema is at version {found}, migrated by a newer release past a contract step: it needs a release that knows schema {required} or later, and this one knows {known}',
    hint: 'Run a release whose migrations reach schema {required} or later (docs/operations.md, "Upgrades": a rollback is possible only across expand steps)',
  },
  'api:store:tls': {
    status: 503,
    message: 'The database refused or failed the TLS check (sslmode={sslmode}): {reason}',
    hint: 'Give the CA that signed the server certificate with sslrootcert=FILE in DATABASE_URL or PGSSLROOTCERT, connect by the host name the certificate names, or choose the sslmode that matches (docs/operations.md, "TLS to PostgreSQL")',
  },
  'api:store:tls-config': {
    status: 500,
    message: 'The TLS settings of DATABASE_URL cannot be used: {reason}',
    hint: 'sslmode is one of disable, allow, prefer, require, verify-ca, verify-full; sslrootcert (or PGSSLROOTCERT) names a readable PEM file or `system`',
  },
  'api:store:pooler-refused': {
    status: 500,
    message: 'The database refused a startup parameter of the connection ({reason}): DATABASE_URL names a pooler',
    hint: 'Set MT_DIRECT_DATABASE_URL to PostgreSQL itself, so DATABASE_URL is used as a pooler (docs/operations.md, "Poolers")',
  },
  'api:store:setting-invalid': {
    status: 500,
    message: 'The setting {name}={value} cannot be used: {reason}',
    hint: 'See docs/configuration.md for the values it takes',
  },
  'api:store:unavailable': {
    status: 503,
    message: 'The database did not answer within {timeoutMs} ms',
    hint: 'Check that PostgreSQL is up and reachable from this server (GET /health says when it is again); MT_DB_TIMEOUT_MS sets the wait',
  },
  'api:store:outcome-unknown': {
    status: 503,
    message:
      'A write was sent to the database and got no answer within {timeoutMs} ms, and whether it took effect could not be settled',
    hint: 'Retry with the same Idempotency-Key: it answers 409 api:request:in-progress while the outcome is held, never runs the write twice',
  },
  'api:store:idempotency-key-lost': {
    status: 409,
    message:
      'This request held Idempotency-Key {key} past its lease and a retry took the key over; nothing of this request was done',
    hint: 'Retry with the same Idempotency-Key: it answers what the retry that holds the key did',
  },
});
