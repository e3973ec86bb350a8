// The JSON Schemas of runs, their events and approvals: the shapes of packages/engine/src/api/types.ts.

const nullableString = { type: ['string', 'null'] };

/** Run statuses, as `RunStatus` of the engine. */
export const RUN_STATUSES = ['Running', 'PendingApproval', 'Completed', 'Failed', 'Cancelled'];

/** Approval statuses, as `ApprovalStatus` of the engine. */
export const APPROVAL_STATUSES = ['Pending', 'Approved', 'Rejected', 'Expired'];

/** Event types, as `RunEventType` of the engine. */
export const RUN_EVENT_TYPES = [
  'run-started',
  'model-response',
  'tool-call-started',
  'tool-result',
  'approval-requested',
  'approval-answered',
  'run-completed',
  'run-failed',
  'run-cancelled',
];

/** Runs, events and approvals, each added once with its `$id`. */
export const runSchemas = [
  {
    $id: 'Actor',
    type: 'object',
    description: 'The API key that answered: its id and name',
    properties: { keyId: { type: 'string' }, keyName: { type: 'string' } },
    required: ['keyId', 'keyName'],
  },
  {
    $id: 'Approval',
    type: 'object',
    description: 'One call waiting for a person, as it is shown (never a secret)',
    properties: {
      id: { type: 'string' },
      runId: { ...nullableString, description: 'The run that waits on it; null for an approval made outside a run' },
      functionName: { type: 'string' },
      argumentsJson: {
        type: 'string',
        description: "JSON text: the model's arguments and the run inputs written into the call",
      },
      status: { type: 'string', enum: APPROVAL_STATUSES },
      agentName: nullableString,
      reason: { ...nullableString, description: 'The reason given with a rejection' },
      answeredBy: { anyOf: [{ $ref: 'Actor#' }, { type: 'null' }] },
      answeredAt: nullableString,
      expiresAt: nullableString,
      createdAt: { type: 'string' },
    },
    required: [
      'id',
      'runId',
      'functionName',
      'argumentsJson',
      'status',
      'agentName',
      'reason',
      'answeredBy',
      'answeredAt',
      'expiresAt',
      'createdAt',
    ],
  },
  {
    $id: 'Run',
    type: 'object',
    description: 'A run of an interaction',
    properties: {
      id: { type: 'string' },
      interaction: {
        type: 'object',
        properties: { name: { type: 'string' }, version: { type: 'integer' } },
        required: ['name', 'version'],
      },
      status: { type: 'string', enum: RUN_STATUSES },
      interactive: { type: 'boolean', description: 'False for an app run: nobody can be asked to approve' },
      inputs: {
        type: 'object',
        additionalProperties: true,
        description: 'The inputs as given (secret inputs are secret ids, never values)',
      },
      result: { ...nullableString, description: 'The final answer of a Completed run' },
      error: {
        anyOf: [
          {
            type: 'object',
            properties: { code: { type: 'string' }, message: { type: 'string' } },
            required: ['code', 'message'],
          },
          { type: 'null' },
        ],
      },
      pendingApproval: { anyOf: [{ $ref: 'Approval#' }, { type: 'null' }] },
      versions: {
        type: 'array',
        description: 'Every version the run uses, pinned when it started',
        items: {
          type: 'object',
          properties: {
            kind: { type: 'string', enum: ['connector', 'tool', 'agent', 'interaction'] },
            name: { type: 'string' },
            version: { type: 'integer' },
          },
          required: ['kind', 'name', 'version'],
        },
      },
      createdAt: { type: 'string' },
      updatedAt: { type: 'string' },
    },
    required: [
      'id',
      'interaction',
      'status',
      'interactive',
      'inputs',
      'result',
      'error',
      'pendingApproval',
      'versions',
      'createdAt',
      'updatedAt',
    ],
  },
  {
    $id: 'RunEvent',
    type: 'object',
    description: 'One stored step of a run; seq counts from 1 and is the SSE event id',
    properties: {
      seq: { type: 'integer' },
      type: { type: 'string', enum: RUN_EVENT_TYPES },
      at: { type: 'string' },
      data: { type: 'object', additionalProperties: true },
    },
    required: ['seq', 'type', 'at', 'data'],
  },
];
