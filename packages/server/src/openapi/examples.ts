// The examples of the OpenAPI document: one value per named schema (a response that is one of them, or a list of
// them, shows it), the sample values the routes' own examples use (`examples` of openapi/operation.ts), and the
// parameters of error messages. They are the sample config repo
// of the README (weather and orders): the connectors open-meteo-forecast and orders-get, the tools current-weather
// and get-order, the agent support-agent and the interaction support. Spectral (oas3-valid-media-example) and
// packages/server/test/openapi-examples.test.ts validate each one against its schema, so they cannot drift.

export const AT = '2026-03-14T09:26:53.589Z';
const LATER = '2026-03-14T09:27:04.112Z';
const EXPIRES = '2026-03-15T09:27:01.020Z';
const RUN_ID = '0b7e2c4a-5d0f-4f5e-9a43-8f1e6b2d7c91';
export const APPROVAL_ID = '7c2f9a61-3b8e-4d1a-b5c6-2e4f8a9d0b13';
const KEY_ID = 'c91d4e7a-2f3b-4a5c-8d6e-1f0a9b8c7d65';
export const SECRET_ID = '5e8a1f3c-9b2d-4c7e-a6f0-3d1b2c4e5f78';
const FILE_SYSTEM_ID = '2a4c6e8f-1b3d-4f5a-9c7e-0d2f4b6a8c1e';
export const KNOWLEDGE_BASE_ID = '9f1e3d5c-7b9a-4e2c-8d4f-6a8b0c2e4f61';
const DOCUMENT_ID = '4d6f8a0c-2e4a-4b6d-9f1a-3c5e7a9b1d2f';
const HASH = 'sha256:8f14e45fceea167a5a36dedd4bea2543a6a2b1c0f7e3d9c2b4a6e8f0d1c3b5a7';

const ACTOR = { keyId: KEY_ID, keyName: 'support lead' };

const WEBHOOK_ID = '3b5d7f9a-1c3e-4a5b-8d7f-9a1c3e5b7d92';
const WEBHOOK_DELIVERY_ID = '8e0a2c4e-6a8c-4e0a-b2c4-6e8a0c2e4a61';
const WEBHOOK_ENDPOINT = {
  id: WEBHOOK_ID,
  url: 'https://hooks.example.com/maitento',
  events: ['approval.requested', 'approval.expired'],
  description: 'Approvals to the support channel',
  enabled: true,
  previousSecretUntil: null,
  createdAt: AT,
  updatedAt: AT,
};

const CONNECTOR = {
  kind: 'connector',
  name: 'orders-get',
  method: 'GET',
  url: 'https://orders.example.com/orders/{orderId}',
  description: 'One order by its id',
  parameters: { path: [{ name: 'orderId', description: 'The order id', required: true, type: 'string' }], query: [] },
  schema: {},
  auth: 'Header',
};

const AUTH_PROVIDER = {
  kind: 'auth-provider',
  name: 'github',
  clientId: 'Iv1.8a61f9b3a7aba766',
  tokenAuthMethod: 'client_secret_basic',
  scopes: ['repo', 'read:user'],
  authorizationParams: {},
  refresh: true,
  authorizationUrl: 'https://github.com/login/oauth/authorize',
  tokenUrl: 'https://github.com/login/oauth/access_token',
  clientSecret: 'github-client-secret',
};

const CONNECTION_ID = '3b5d7f9a-1c3e-4a5b-8d7f-9a1c3e5b7d90';

const TOOL = {
  kind: 'tool',
  name: 'get-order',
  connector: 'orders-get',
  guidance: 'Looks up an order by its id.',
  bindings: { request: {}, query: {}, path: {} },
  auth: { header: 'X-Api-Key', secret: 'orders-key' },
  requiresApproval: false,
};

const AGENT = {
  kind: 'agent',
  name: 'support-agent',
  model: 'openai:gpt-4o-mini',
  instructions: 'Help customers with their orders.',
  functions: [{ ref: 'get-order' }],
};

const INTERACTION = {
  kind: 'interaction',
  name: 'support',
  agent: { name: 'Support', agent: 'support-agent' },
  task: 'A customer writes: %%message%%',
  inputs: {
    prompts: [{ name: 'message', description: 'What the customer wrote', required: true }],
    functions: { binding: [], auth: [] },
  },
  functions: { openApi: [] },
};

const APPROVAL = {
  id: APPROVAL_ID,
  runId: RUN_ID,
  functionName: 'refund-order',
  argumentsJson: '{"orderId":"A-1042","amount":25}',
  requestHash: '3f1c9a0e5b7d2c4f8a6e1b3d5c7f9a0b2d4e6f8a1c3e5b7d9f0a2c4e6b8d0f1a',
  edited: null,
  status: 'Pending',
  agentName: 'support-agent',
  reason: null,
  answeredBy: null,
  answeredAt: null,
  expiresAt: EXPIRES,
  createdAt: LATER,
};

export const RUN = {
  id: RUN_ID,
  interaction: { name: 'support', version: 2 },
  status: 'Completed',
  interactive: true,
  inputs: { message: 'Where is my order A-1042?' },
  result: 'Order A-1042 shipped on 12 March and should arrive on 16 March.',
  error: null,
  pendingApproval: null,
  parentRunId: null,
  agent: 'support-agent',
  versions: [
    { kind: 'interaction', name: 'support', version: 2 },
    { kind: 'agent', name: 'support-agent', version: 1 },
    { kind: 'tool', name: 'get-order', version: 1 },
    { kind: 'connector', name: 'orders-get', version: 1 },
  ],
  usage: { inputTokens: 1840, outputTokens: 212, costUsd: 0.00646 },
  budget: { tokens: 20000, costUsd: null, onExceeded: 'wait' },
  createdAt: AT,
  updatedAt: LATER,
};

const SECRET_KEY_STATUS = { currentKeyId: 'k2', secretsByKeyId: { k1: 0, k2: 14 }, unusedPreviousKeyIds: ['k1'] };

const FILE_INFO = {
  path: 'reports/2026-03.md',
  size: 1834,
  contentType: 'text/markdown; charset=utf-8',
  etag: '"3f2a9c1e7b"',
  createdAt: AT,
  updatedAt: LATER,
};

export const RUN_EVENTS = [
  { seq: 1, type: 'run-started', at: AT, data: { interaction: 'support', version: 2 } },
  {
    seq: 2,
    type: 'tool-call-started',
    at: '2026-03-14T09:26:55.020Z',
    data: { tool: 'get-order', arguments: { orderId: 'A-1042' } },
  },
  {
    seq: 3,
    type: 'run-completed',
    at: LATER,
    data: { result: 'Order A-1042 shipped on 12 March and should arrive on 16 March.' },
  },
];

/** One row of the audit log: a secret rotated by an admin key (its name, never its value). */
const AUDIT_ENTRY = {
  id: '1042',
  at: AT,
  namespace: 'default',
  actor: { kind: 'key', id: KEY_ID, role: 'admin', via: 'api' },
  action: 'secret.rotated',
  target: { kind: 'secret', id: SECRET_ID },
  before: null,
  after: { name: 'orders-key', updatedAt: AT },
  requestId: 'b3f1c2d4-5e6f-4a7b-8c9d-0e1f2a3b4c5d',
};

/** One example of each named schema (components.schemas) an answer is made of. */
export const SCHEMA_EXAMPLES: Record<string, unknown> = {
  CreatedNamespace: {
    name: 'support',
    key: { id: KEY_ID, key: 'mt_3q8Vx0cY9nKp2LwR7tZb1fHj5mNs4uDa', role: 'admin' },
  },
  CreatedKey: {
    id: KEY_ID,
    name: 'ci deploys',
    role: 'user',
    secrets: [SECRET_ID],
    createdAt: AT,
    key: 'mt_7hGt2kLw9pQx4zVn1cRb8sYd3fMa6uJe',
  },
  KeyInfo: { id: KEY_ID, name: 'ci deploys', role: 'user', secrets: [SECRET_ID], createdAt: AT },
  AuditEntry: AUDIT_ENTRY,
  WebhookEndpoint: WEBHOOK_ENDPOINT,
  WebhookEndpointWithSecret: {
    endpoint: WEBHOOK_ENDPOINT,
    secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  },
  WebhookDelivery: {
    id: WEBHOOK_DELIVERY_ID,
    messageId: `msg_${WEBHOOK_DELIVERY_ID.replaceAll('-', '')}`,
    endpointId: WEBHOOK_ID,
    eventType: 'approval.requested',
    status: 'Pending',
    attempts: 2,
    nextAttemptAt: LATER,
    lastStatus: 503,
    lastError: 'the receiver answered HTTP 503',
    createdAt: AT,
    deliveredAt: null,
  },
  AuditPage: { entries: [AUDIT_ENTRY], nextCursor: 'eyJiZWZvcmUiOiIxMDQyIn0' },
  DeployPlan: {
    applied: true,
    changes: [
      {
        kind: 'tool',
        name: 'get-order',
        action: 'update',
        version: 2,
        previousVersion: 1,
        changed: ['guidance'],
        breaking: [],
      },
      { kind: 'connector', name: 'orders-get', action: 'unchanged', version: 1, breaking: [] },
    ],
  },
  ResourceSummary: { name: 'orders-get', latestVersion: 2, enabled: true },
  VersionSummary: { version: 2, enabled: true, createdAt: AT, deployedBy: KEY_ID },
  VersionState: { name: 'get-order', version: 2, enabled: false },
  ConnectorRecord: { name: 'orders-get', version: 1, enabled: true, createdAt: AT, hash: HASH, resource: CONNECTOR },
  AuthProviderRecord: { name: 'github', version: 1, enabled: true, createdAt: AT, hash: HASH, resource: AUTH_PROVIDER },
  ScheduleState: {
    name: 'morning-triage',
    version: 3,
    interaction: 'triage',
    cron: '0 8 * * MON-FRI',
    timezone: 'Europe/Paris',
    overlap: 'skip',
    missed: 'run-once',
    enabled: true,
    paused: false,
    lastTick: '2026-03-13T07:00:00.000Z',
    nextTick: '2026-03-16T07:00:00.000Z',
  },
  ScheduleTick: {
    tick: '2026-03-13T07:00:00.000Z',
    version: 3,
    status: 'started',
    runId: RUN_ID,
    detail: null,
    recordedAt: '2026-03-13T07:00:00.012Z',
  },
  HookAccepted: { eventId: 'evt_1QhZ2b', status: 'started', runId: RUN_ID },
  TriggerDelivery: {
    eventId: 'evt_1QhZ2b',
    version: 1,
    status: 'started',
    runId: RUN_ID,
    detail: null,
    answerStatus: 202,
    receivedAt: AT,
  },
  TriggerDeliveryLog: {
    deliveries: [
      {
        eventId: 'evt_1QhZ2b',
        version: 1,
        status: 'started',
        runId: RUN_ID,
        detail: null,
        answerStatus: 202,
        receivedAt: AT,
      },
      {
        eventId: 'evt_1QhZ1a',
        version: 1,
        status: 'refused',
        runId: null,
        detail: 'Missing required input: orderId (a prompt input)',
        answerStatus: 422,
        receivedAt: AT,
      },
    ],
    rejected: { signature: 2, timestamp: 1 },
  },
  Connection: {
    id: CONNECTION_ID,
    provider: 'github',
    endUser: 'user-42',
    status: 'Active',
    scopes: ['repo', 'read:user'],
    hasRefreshToken: true,
    accessTokenExpiresAt: EXPIRES,
    createdAt: AT,
    updatedAt: AT,
  },
  ConnectLink: {
    id: '6e8a0c2e-4a6c-4e8a-b0c2-e4a6c8e0a2c4',
    url: 'https://github.com/login/oauth/authorize?client_id=Iv1.8a61f9b3a7aba766&redirect_uri=https%3A%2F%2Fmaitento.example.com%2Fv1%2Fconnections%2Fcallback&response_type=code&scope=repo+read%3Auser&state=q3Zp0Wk8&code_challenge=E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM&code_challenge_method=S256',
    provider: 'github',
    endUser: 'user-42',
    scopes: ['repo', 'read:user'],
    expiresAt: EXPIRES,
  },
  ExtopSummary: { name: 'get-order', latestVersion: 1, enabled: true, callable: true },
  ExtopRecord: {
    name: 'get-order',
    version: 1,
    enabled: true,
    createdAt: AT,
    hash: HASH,
    connector: { name: 'orders-get', version: 1 },
    resource: TOOL,
    definition: {
      name: 'get-order',
      description: 'Looks up an order by its id.',
      parameters: {
        type: 'object',
        properties: { orderId: { type: 'string', description: 'The order id' } },
        required: ['orderId'],
      },
    },
  },
  ExtopCallResult: { ok: true, status: 200, body: { id: 'A-1042', status: 'shipped', total: 25 } },
  AgentRecord: {
    name: 'support-agent',
    version: 1,
    enabled: true,
    createdAt: AT,
    hash: HASH,
    model: 'openai:gpt-4o-mini',
    instructions: 'Help customers with their orders.',
    tools: [{ name: 'get-order', version: 1 }],
    resource: AGENT,
  },
  InteractionRecord: {
    name: 'support',
    version: 2,
    enabled: true,
    createdAt: AT,
    hash: HASH,
    agent: { name: 'Support', agent: 'support-agent', version: 1 },
    task: 'A customer writes: %%message%%',
    inputs: [{ name: 'message', kind: 'prompt', required: true, description: 'What the customer wrote' }],
    tools: [{ name: 'get-order', version: 1 }],
    resource: INTERACTION,
  },
  Secret: { id: SECRET_ID, name: 'orders-key', createdAt: AT, updatedAt: AT },
  SecretKeyStatus: SECRET_KEY_STATUS,
  SecretKeyRotation: { keyId: 'k2', rewrapped: 14, converted: 0, batches: 1, status: SECRET_KEY_STATUS },
  Run: RUN,
  UsageReport: {
    since: '2026-03-01T00:00:00Z',
    until: '2026-04-01T00:00:00Z',
    by: 'interaction',
    groups: [
      { key: 'support', runs: 412, toolCalls: 1187, inputTokens: 3_904_120, outputTokens: 402_911, costUsd: 13.789 },
      { key: 'weather', runs: 88, toolCalls: 91, inputTokens: 120_440, outputTokens: 20_108, costUsd: 0.4621 },
    ],
  },
  QuotaStanding: {
    namespace: 'support',
    quotas: { runsPerDay: 1000, toolCallsPerDay: 20000, tokensPerMonth: 50_000_000 },
    used: { runsToday: 212, toolCallsToday: 655, tokensThisMonth: 8_402_114 },
    dayEndsAt: '2026-03-13T00:00:00.000Z',
    monthEndsAt: '2026-04-01T00:00:00.000Z',
  },
  RunPage: {
    runs: [
      {
        id: RUN_ID,
        interaction: { name: 'support', version: 2 },
        status: 'Completed',
        interactive: true,
        result: 'Order A-1042 shipped on 12 March and should arrive on 16 March.',
        resultTruncated: false,
        error: null,
        pendingApprovalId: null,
        parentRunId: null,
        agent: 'support-agent',
        usage: { inputTokens: 1840, outputTokens: 212, costUsd: 0.00646 },
        createdAt: AT,
        updatedAt: LATER,
      },
    ],
    nextCursor: 'eyJjIjoiMjAyNi0wMy0xNFQwOToyNjo1My41ODlaIiwiaSI6IjBiN2UyYzRhIn0',
  },
  RunEvent: RUN_EVENTS[1],
  Approval: APPROVAL,
  FileSystem: {
    id: FILE_SYSTEM_ID,
    name: 'reports',
    description: 'Monthly reports the support agent writes',
    files: 12,
    bytes: 48213,
    createdAt: AT,
  },
  FileInfo: FILE_INFO,
  FilePage: { files: [FILE_INFO], nextCursor: null },
  KnowledgeBase: {
    id: KNOWLEDGE_BASE_ID,
    name: 'Handbook',
    description: 'The support handbook: refunds, shipping, returns',
    language: 'english',
    documentCount: 3,
    chunkCount: 41,
    createdAt: AT,
  },
  KnowledgeDocument: {
    id: DOCUMENT_ID,
    name: 'refunds.md',
    contentType: 'text/markdown',
    bytes: 5120,
    chunkCount: 9,
    status: 'ready',
    createdAt: AT,
  },
  KnowledgeSearch: {
    results: [
      {
        text: 'Refunds are made to the original payment method within 14 days of the return arriving.',
        score: 0.82,
        title: 'Refunds > Timing',
        position: 3,
        document: { id: DOCUMENT_ID, name: 'refunds.md' },
      },
    ],
  },
};

export const ANSWERED = { ...APPROVAL, answeredBy: ACTOR, answeredAt: LATER };

export const MARKDOWN =
  '# Refunds\n\nRefunds are made to the original payment method within 14 days of the return arriving.\n';

/** Sample values of the parameters of error messages, for the example error of each code. */
export const ERROR_PARAMS: Record<string, string | number> = {
  name: 'get-order',
  version: '',
  suggestion: '',
  id: RUN_ID,
  runId: RUN_ID,
  tool: 'get-order',
  connector: 'orders-get',
  host: 'orders.example.com',
  status: 'Completed',
  detail: 'body/name must match pattern "^[a-z0-9][a-z0-9-]{0,62}$"',
  action: 'change this namespace',
  role: 'admin',
  limit: 10485760,
  method: 'GET',
  url: '/v1/runz',
  allow: 'GET, HEAD',
  type: 'application/xml',
  max: 20,
  path: 'reports/2026-03.md',
  reason: 'the path ends with /',
  count: 1,
  keyId: KEY_ID,
  timeoutMs: 5000,
  seconds: 30,
  cursor: 'not-a-cursor',
  ref: 'orders-key',
  kind: 'tool',
  refKind: 'connector',
  refName: 'orders-get',
  file: 'connectors/mcp/docs.mtr',
  expiresAt: EXPIRES,
  interaction: 'support',
  what: 'it has no default',
  argument: 'orderId',
  knowledgeBase: KNOWLEDGE_BASE_ID,
  language: 'klingon',
  known: 'english, french, german, simple',
  size: 2097152,
  bytes: 1073741824,
  condition: 'If-Match "3f2a9c1e7b"',
  secret: 'orders-key',
  input: 'shopKey',
  remote: 'search',
  operation: 'tools/call',
  origin: 'https://mcp.example.com',
  target: 'https://other.example.com',
  parameter: 'orderId',
  problems: 'orderId must be string',
  which: 'request',
  model: 'openai:gpt-4o-mini',
  provider: 'openai',
  missing: 'OPENAI_API_KEY',
  agent: 'support-agent',
  depth: 5,
  how: 'failed',
  why: '',
  pin: 'get-order',
  pinVersion: 1,
  found: 42,
  dir: '/var/lib/maitento',
  pid: 4242,
  length: 0,
  entry: '10.0.0.0/33',
  variable: 'MT_SECRET_KEY',
  issuer: 'https://accounts.google.com',
  expected: 'https://maitento.example.com/v1/connections/callback',
};
