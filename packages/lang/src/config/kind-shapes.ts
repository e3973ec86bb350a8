import type { ResourceKind } from './resources.js';
import type { Property, Shape } from './shape.js';

/** Longest connector description allowed. */
export const MAX_DESCRIPTION = 500;

/** How run inputs and parameters may be named: letters, digits, `_` and `-`, not starting with a digit. */
export const INPUT_NAME = /^[A-Za-z_][A-Za-z0-9_-]*$/;

const str: Shape = { type: 'string' };
const bool: Shape = { type: 'boolean' };
const json: Shape = { type: 'json' };
// `doc` is what editors show for the property (completion, hover); the shape itself says its type and values.
const req = (shape: Shape, doc?: string): Property =>
  doc ? { shape, required: true, doc } : { shape, required: true };
const opt = (shape: Shape, doc?: string): Property => (doc ? { shape, doc } : { shape });

const nonEmpty: Shape = { type: 'string', check: (v) => (v.trim() === '' ? 'must not be empty' : undefined) };

const inputName: Shape = {
  type: 'string',
  check: (v) =>
    INPUT_NAME.test(v)
      ? undefined
      : `is ${JSON.stringify(v)}; a name is letters, digits, _ and -, not starting with a digit`,
};

const parameter: Shape = {
  type: 'object',
  name: 'a parameter',
  properties: {
    name: req(inputName),
    description: opt(str),
    required: opt(bool),
    type: opt({ type: 'string', values: ['string', 'number', 'integer', 'boolean'] }),
  },
};

const connector: Shape = {
  type: 'object',
  name: 'a connector',
  properties: {
    method: req({ type: 'string', values: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] }, 'The HTTP method of the call.'),
    url: req(nonEmpty, 'The full http(s):// URL; `{name}` marks a path parameter (in the path only).'),
    description: req({ type: 'string', maxLength: MAX_DESCRIPTION }, 'What the endpoint does, 500 characters at most.'),
    parameters: opt(
      {
        type: 'object',
        name: 'parameters',
        properties: {
          path: opt(
            { type: 'array', items: parameter },
            'The path parameters, each `{name}` of the url; required by default.',
          ),
          query: opt({ type: 'array', items: parameter }, 'The query parameters; optional by default.'),
          header: opt(
            { type: 'array', items: parameter },
            'The header parameters the model fills (never the credential); optional by default.',
          ),
        },
      },
      'The path, query and header parameters of the call.',
    ),
    schema: opt(
      {
        type: 'object',
        name: 'schema',
        properties: {
          request: opt({ type: 'schema' }, 'JSON Schema of the request body; without it no body is sent.'),
          response: opt({ type: 'schema' }, 'JSON Schema the response must match.'),
        },
      },
      'JSON Schemas of the request body and of the response.',
    ),
    auth: opt(
      { type: 'string', values: ['None', 'Header', 'Maitento'] },
      '"None" (default), "Header" (a tool or run gives the secret) or "Maitento" (the platform\'s own API).',
    ),
  },
};

/**
 * How a remote MCP tool may be named: 1 to 128 ASCII letters, digits, `_`, `-`, `.` and `/`. The MCP
 * specification (2025-11-25, "Tool names") recommends the same without `/`; its first version (SEP-986)
 * allowed `/`, so names such as `user-profile/update` are accepted too.
 */
export const MCP_TOOL_NAME = /^[A-Za-z0-9_./-]{1,128}$/;

const mcpToolName: Shape = {
  type: 'string',
  check: (v) =>
    MCP_TOOL_NAME.test(v)
      ? undefined
      : v === ''
        ? 'must not be empty; it is the name the MCP server lists the tool under'
        : v.length > 128
          ? `is ${v.length} characters long; an MCP tool name is 1 to 128 characters`
          : `is ${JSON.stringify(v)}; an MCP tool name is letters, digits, _, -, . and /, such as "search_issues"`,
};

/** A connector to one tool of a remote MCP server (`connectors/mcp/<name>.mtr`). */
const mcpConnector: Shape = {
  type: 'object',
  name: 'an MCP connector',
  properties: {
    url: req(nonEmpty, 'The URL of the remote MCP server (Streamable HTTP).'),
    tool: req(mcpToolName, 'The name the MCP server lists the tool under.'),
    description: opt(
      { type: 'string', maxLength: MAX_DESCRIPTION },
      "What the tool does; the remote tool's description when absent.",
    ),
    auth: opt({
      type: 'string',
      values: ['None', 'Header'],
      refused: {
        Maitento: {
          detail:
            'is "Maitento", which is only for the platform\'s own API; an MCP connector\'s auth is "None" or "Header"',
          instead: 'use auth = "Header" and give the secret in the tool\'s auth (or a run input), or "None"',
        },
      },
    }),
  },
  refused: {
    method: 'an MCP connector is always called with the MCP tools/call request; remove method',
    parameters: 'an MCP tool takes only its arguments (a JSON object), no path or query parameters; remove parameters',
    schema:
      "the input schema comes from the remote MCP server: a deploy reads it from the server's tools/list; remove schema",
  },
};

const tool: Shape = {
  type: 'object',
  name: 'a tool',
  properties: {
    connector: req({ type: 'ref', kind: 'connector' }, 'The connector the tool calls.'),
    guidance: req(nonEmpty, 'When and how to use the tool: the description the model reads.'),
    bindings: opt(
      {
        type: 'object',
        name: 'bindings',
        properties: {
          request: opt({ type: 'map', values: json }, 'Fixed body values (`bindings.request:address/city`).'),
          query: opt({ type: 'map', values: json }, 'Fixed query parameters.'),
          path: opt({ type: 'map', values: json }, 'Fixed path parameters.'),
        },
      },
      'Fixed values Maitento adds to every call; the model never sees them.',
    ),
    auth: opt(
      {
        type: 'object',
        name: "a tool's auth",
        properties: {
          header: req(nonEmpty, 'The header the secret is sent in.'),
          secret: req({ type: 'ref', kind: 'secret' }, 'The secret whose value is sent.'),
        },
      },
      'The secret sent in a header, for a connector with auth = "Header".',
    ),
    requiresApproval: opt(bool, 'true: a person approves each call first (default false).'),
    approval: opt(
      {
        type: 'object',
        name: "a tool's approval policy",
        properties: {
          approvers: opt(
            { type: 'array', items: nonEmpty },
            'Who may answer: key roles ("approver", "user", "admin") and/or API key ids (default: every role that answers).',
          ),
          count: opt(
            { type: 'number' },
            'How many distinct keys must approve a call (default 1; 2: a two-person rule).',
          ),
          excludeStarter: opt(bool, "true: the key that started the run's tree may not answer (separation of duties)."),
        },
      },
      'Who may approve its calls, how many, and whether the starter may (with requiresApproval = true; docs/roles.md).',
    ),
  },
};

const agent: Shape = {
  type: 'object',
  name: 'an agent',
  properties: {
    // Which providers exist is checked once the agent is built (agent-checks.ts), with its own codes.
    model: req(
      str,
      '`provider:name`, such as "openai:gpt-4o-mini"; providers: openai, anthropic, openai-compatible, scripted.',
    ),
    instructions: req(str, 'The system prompt.'),
    summary: opt(str, 'What other agents read about this agent; required when another agent hands it tasks.'),
    functions: opt(
      {
        type: 'array',
        // A tool (`ref`) or another agent (`agent`): exactly one of them, checked in agent-checks.ts.
        items: {
          type: 'object',
          name: 'a function',
          exclusive: [['ref', 'agent']],
          properties: {
            ref: opt({ type: 'ref', kind: 'tool' }, 'A tool the agent may call.'),
            agent: opt({ type: 'ref', kind: 'agent' }, 'An agent this agent may hand a task to (agents as tools).'),
          },
        },
      },
      'The tools and agents the agent may call, each once: `[ { ref = @ref("<tool>") }, { agent = @ref("<agent>") } ]`.',
    ),
  },
};

const prompt: Shape = {
  type: 'object',
  name: 'a prompt input',
  properties: { name: req(inputName), description: opt(str), required: opt(bool), default: opt(str) },
};

const binding: Shape = {
  type: 'object',
  name: 'a run-input binding',
  properties: {
    function: req({ type: 'ref', kind: 'tool' }),
    agent: opt({ type: 'ref', kind: 'agent' }),
    name: req(inputName),
    target: req(nonEmpty),
    type: opt({ type: 'string', values: ['request', 'query', 'path'] }),
    required: opt(bool),
    default: opt(json),
    description: opt(str),
  },
};

const authInput: Shape = {
  type: 'object',
  name: 'a run-input auth',
  properties: {
    name: req(inputName),
    function: req({ type: 'ref', kind: 'tool' }),
    agent: opt({ type: 'ref', kind: 'agent' }),
    header: opt(nonEmpty),
    required: opt(bool),
    secret: opt({ type: 'ref', kind: 'secret' }),
    description: opt(str),
  },
};

const interaction: Shape = {
  type: 'object',
  name: 'an interaction',
  properties: {
    agent: req(
      {
        type: 'object',
        name: "the interaction's agent",
        properties: {
          name: req(nonEmpty, 'How runs and approvals name the agent.'),
          agent: req({ type: 'ref', kind: 'agent' }, 'The agent.'),
        },
      },
      'The agent that runs the task: `{ name = "Support" agent = @ref("<agent>") }`.',
    ),
    task: req(nonEmpty, 'The task, with `%%input%%` placeholders.'),
    inputs: opt(
      {
        type: 'object',
        name: 'inputs',
        properties: {
          prompts: opt(
            { type: 'array', items: prompt },
            'Text run inputs: `[ { name description required default } ]`.',
          ),
          functions: opt(
            {
              type: 'object',
              name: 'inputs.functions',
              properties: {
                binding: opt({ type: 'array', items: binding }, 'Run inputs written straight into a tool call.'),
                auth: opt({ type: 'array', items: authInput }, "Run inputs that carry a secret's id."),
              },
            },
            'Run inputs for tool calls.',
          ),
        },
      },
      'The run inputs of the interaction.',
    ),
    functions: opt(
      {
        type: 'object',
        name: 'functions',
        properties: {
          openApi: opt(
            {
              type: 'array',
              items: {
                type: 'object',
                name: 'a functions.openApi entry',
                properties: { name: opt(str), ref: req({ type: 'ref', kind: 'tool' }, 'The tool.') },
              },
            },
            'Tools handed to every agent: `[ { name ref = @ref("<tool>") } ]`.',
          ),
        },
      },
      'The tools the interaction gives its agents.',
    ),
    result: opt(
      {
        type: 'object',
        name: 'result',
        properties: {
          schema: req({ type: 'schema' }, 'The JSON Schema of the answer: an object, inline or `@json(...)`.'),
        },
      },
      'The shape of the final answer: `{ schema = @json("<file>.schema.json") }` (docs/runs.md).',
    ),
  },
};

/** How long a conversation may wait for a message by default: 24 hours. */
export const DEFAULT_MAX_IDLE_SECONDS = 24 * 60 * 60;

const DURATION_UNITS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400 };

/** Seconds of a duration such as `"90s"`, `"30m"`, `"24h"` or `"7d"` (1 s to 30 days), or undefined. */
export function parseDuration(text: string): number | undefined {
  const match = /^([1-9][0-9]{0,6})(s|m|h|d)$/.exec(text);
  if (!match) return undefined;
  const seconds = Number(match[1]) * (DURATION_UNITS[match[2]!] ?? 0);
  return seconds <= 30 * 86_400 ? seconds : undefined;
}

/** A conversation interaction (`interactions/conversation/<name>.mtr`): a one-shot's properties and `maxIdle`. */
const conversation: Shape = {
  ...interaction,
  name: 'a conversation interaction',
  properties: {
    ...(interaction as Extract<Shape, { type: 'object' }>).properties,
    maxIdle: opt(
      {
        type: 'string',
        check: (v) =>
          parseDuration(v) === undefined
            ? `is ${JSON.stringify(v)}; a duration is a whole number and s, m, h or d, such as "30m" or "24h", at most 30 days`
            : undefined,
      },
      'How long the conversation waits for a message before it ends, such as "30m" (default "24h", at most "30d").',
    ),
  },
} as Shape;

/** The shape of each resource kind's file. */
export const KIND_SHAPES: Readonly<Record<ResourceKind, Shape>> = { connector, tool, agent, interaction };

/** The shape of a conversation interaction's file (`interactions/conversation/<name>.mtr`). */
export const CONVERSATION_SHAPE: Shape = conversation;

/** The shape of an MCP connector's file (`connectors/mcp/<name>.mtr`). */
export const MCP_CONNECTOR_SHAPE: Shape = mcpConnector;
