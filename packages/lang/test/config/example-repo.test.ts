import { fileURLToPath } from 'node:url';
import { compileRepo, interactionTools, readConfigRepo } from '@maitento/lang';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../../../', import.meta.url));
// The example's auth = "Maitento" tools (the file tools, the handbook search) name paths on the platform: the repo
// compiles with no platform URL (mt check without MT_PUBLIC_URL) and with any.
const platformOrigin = 'http://10.1.2.3:9090';

describe('the example config repo at the top level', () => {
  it('reads only the resource folders and compiles without any diagnostic', async () => {
    const files = await readConfigRepo(root);
    expect(files.every((f) => /^(connectors|external-operations|agents|interactions)\//.test(f.path))).toBe(true);
    const repo = compileRepo(files);
    expect(repo.diagnostics).toEqual([]);
    expect(repo.ok).toBe(true);
    for (const origin of ['http://127.0.0.1:8080', 'https://maitento.example.com', platformOrigin]) {
      expect(compileRepo(files, { platformOrigin: origin }).diagnostics, origin).toEqual([]);
    }
    expect(repo.sources.map((s) => `${s.kind}:${s.name}`)).toEqual(
      expect.arrayContaining([
        'connector:open-meteo-forecast',
        'connector:orders-get-order',
        'connector:orders-refund-order',
        'tool:current-weather',
        'tool:get-order',
        'tool:refund-order',
        'tool:search-handbook',
        'agent:handbook-assistant',
        'agent:support-agent',
        // Agents as tools: the front desk hands billing questions to the billing agent.
        'agent:triage-agent',
        'agent:billing-agent',
        'interaction:triage',
        'interaction:ask-handbook',
        'interaction:support-any-shop',
        'interaction:weather',
      ]),
    );
  });

  it('gives current-weather the seed arguments: latitude, longitude and a nullable unit, never current', async () => {
    const repo = compileRepo(await readConfigRepo(root), { platformOrigin });
    expect(repo.definitions.get('current-weather')).toEqual({
      name: 'current-weather',
      description:
        'Gets the current temperature, the wind speed in km/h and the WMO weather code for a place. Work out the latitude and longitude of the place yourself before you call it. The response says which temperature unit it uses.',
      parameters: {
        type: 'object',
        properties: {
          additionalInputs: {
            type: 'object',
            properties: {
              'query.latitude': {
                type: ['number', 'null'],
                description: 'Latitude in decimal degrees, for example 51.5072',
              },
              'query.longitude': {
                type: ['number', 'null'],
                description: 'Longitude in decimal degrees, for example -0.1276',
              },
              'query.temperature_unit': { type: ['string', 'null'], description: 'celsius or fahrenheit' },
            },
            required: ['query.latitude', 'query.longitude', 'query.temperature_unit'],
            additionalProperties: false,
          },
        },
        required: ['additionalInputs'],
        additionalProperties: false,
      },
    });
  });

  it('gives refund-order the argumentsJson shape of the seed approval: request and path.orderId', async () => {
    const repo = compileRepo(await readConfigRepo(root), { platformOrigin });
    const definition = repo.definitions.get('refund-order');
    expect(definition?.parameters).toEqual({
      type: 'object',
      properties: {
        request: {
          type: 'object',
          properties: {
            amount: {
              type: 'number',
              description: "The amount to refund, in the order's currency",
              exclusiveMinimum: 0,
            },
            reason: { type: 'string', description: 'Why, in words the customer will read' },
          },
          required: ['amount', 'reason'],
          additionalProperties: false,
        },
        additionalInputs: {
          type: 'object',
          properties: { 'path.orderId': { type: 'string', description: "The order's id, for example A-1001" } },
          required: ['path.orderId'],
          additionalProperties: false,
        },
      },
      required: ['request', 'additionalInputs'],
      additionalProperties: false,
    });
    expect(repo.tools.find((t) => t.name === 'refund-order')?.requiresApproval).toBe(true);
  });

  it('removes the fields an interaction binds to run inputs from the tools its agent sees', async () => {
    const repo = compileRepo(await readConfigRepo(root), { platformOrigin });
    const weather = repo.interactions.find((i) => i.name === 'weather')!;
    const [agent] = interactionTools(weather, repo);
    expect(agent.agentName).toBe('Weather');
    const inputs = agent.tools[0].definition.parameters.properties as Record<string, { properties: object }>;
    expect(Object.keys(inputs.additionalInputs.properties)).toEqual(['query.latitude', 'query.longitude']);

    const handbook = repo.interactions.find((i) => i.name === 'ask-handbook')!;
    const [assistant] = interactionTools(handbook, repo);
    expect(assistant.tools.map((t) => t.tool.name)).toEqual(['search-handbook']);
    const request = (assistant.tools[0].definition.parameters.properties as Record<string, { required: string[] }>)
      .request;
    expect(request.required).toEqual(['query']);
  });
});
