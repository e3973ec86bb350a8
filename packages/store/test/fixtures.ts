import type { Agent, Connector, Interaction, Tool, ToolDefinition } from '@maitento/lang';
import type { CompiledResources } from '@maitento/store';

// A hand-built copy of the sample repo's resources, so the store is tested without the compiler.

export function weatherConnector(overrides: Partial<Connector> = {}): Connector {
  return {
    kind: 'connector',
    name: 'open-meteo-forecast',
    method: 'GET',
    url: 'https://api.open-meteo.com/v1/forecast',
    description: 'Current weather for a latitude and longitude, from Open-Meteo',
    parameters: {
      path: [],
      query: [
        { name: 'latitude', required: false, type: 'number' },
        { name: 'longitude', required: false, type: 'number' },
        { name: 'current', required: false, type: 'string' },
      ],
    },
    schema: {},
    auth: 'None',
    ...overrides,
  };
}

export function ordersConnector(overrides: Partial<Connector> = {}): Connector {
  return {
    kind: 'connector',
    name: 'orders-get',
    method: 'GET',
    url: 'https://orders.example.com/orders/{orderId}',
    description: 'One order',
    parameters: { path: [{ name: 'orderId', required: true, type: 'string' }], query: [] },
    schema: {},
    auth: 'Header',
    ...overrides,
  };
}

export function weatherTool(overrides: Partial<Tool> = {}): Tool {
  return {
    kind: 'tool',
    name: 'current-weather',
    connector: 'open-meteo-forecast',
    guidance: 'Gets the current weather for a place.',
    bindings: { request: {}, query: { current: 'temperature_2m' }, path: {} },
    requiresApproval: false,
    ...overrides,
  };
}

export function orderTool(overrides: Partial<Tool> = {}): Tool {
  return {
    kind: 'tool',
    name: 'get-order',
    connector: 'orders-get',
    guidance: 'Looks up an order by its id.',
    bindings: { request: {}, query: {}, path: {} },
    auth: { header: 'X-Api-Key', secret: 'orders-key' },
    requiresApproval: false,
    ...overrides,
  };
}

export function supportAgent(overrides: Partial<Agent> = {}): Agent {
  return {
    kind: 'agent',
    name: 'support-agent',
    model: 'openai:gpt-4o-mini',
    instructions: 'Help customers with their orders.',
    functions: [{ ref: 'get-order' }],
    ...overrides,
  };
}

export function weatherAgent(overrides: Partial<Agent> = {}): Agent {
  return {
    kind: 'agent',
    name: 'weather-agent',
    model: 'openai:gpt-4o-mini',
    instructions: 'Answer questions about the weather.',
    functions: [{ ref: 'current-weather' }],
    ...overrides,
  };
}

export function supportInteraction(overrides: Partial<Interaction> = {}): Interaction {
  return {
    kind: 'interaction',
    name: 'support',
    agent: { name: 'Support', agent: 'support-agent' },
    task: 'A customer writes: %%message%%',
    inputs: { prompts: [{ name: 'message', required: true }], functions: { binding: [], auth: [] } },
    functions: { openApi: [] },
    ...overrides,
  };
}

/** The definition a model would see for a tool with the given query/path fields. */
export function definitionFor(tool: Tool, fields: Record<string, { type: string | string[] }>): ToolDefinition {
  return {
    name: tool.name,
    description: tool.guidance,
    parameters: {
      type: 'object',
      properties: { additionalInputs: { type: 'object', properties: fields, additionalProperties: false } },
      required: ['additionalInputs'],
      additionalProperties: false,
    },
  };
}

/** The whole sample: two connectors, two tools, two agents, one interaction. */
export function sampleRepo(
  changes: { weather?: Partial<Connector>; orders?: Partial<Connector>; weatherTool?: Partial<Tool> } = {},
): CompiledResources {
  const weather = weatherTool(changes.weatherTool);
  const order = orderTool();
  return {
    connectors: [weatherConnector(changes.weather), ordersConnector(changes.orders)],
    tools: [weather, order],
    agents: [supportAgent(), weatherAgent()],
    interactions: [supportInteraction()],
    definitions: new Map([
      [
        weather.name,
        definitionFor(weather, { 'query.latitude': { type: 'number' }, 'query.longitude': { type: 'number' } }),
      ],
      [order.name, definitionFor(order, { 'path.orderId': { type: 'string' } })],
    ]),
  };
}

/** Every row of every Maitento table, in a stable order, for before/after comparisons. */
export async function dumpTables(db: {
  query: (text: string) => Promise<{ rows: Record<string, unknown>[] }>;
}): Promise<Record<string, unknown[]>> {
  const tables = ['mt_namespaces', 'mt_api_keys', 'mt_secrets', 'mt_resource_versions', 'mt_migrations'];
  const out: Record<string, unknown[]> = {};
  for (const table of tables) {
    const { rows } = await db.query(`SELECT to_jsonb(t) AS row FROM ${table} t ORDER BY to_jsonb(t)::text`);
    out[table] = rows.map((row) => row.row);
  }
  return out;
}
