import type { Connector, ConnectorParameter, Tool } from '@maitento/lang';

function param(name: string, type: ConnectorParameter['type'] = 'string', required = false): ConnectorParameter {
  return { name, description: `the ${name}`, type, required };
}

/** The seed's open-meteo-forecast connector, at `base` instead of https://api.open-meteo.com. */
export function openMeteoForecast(base: string): Connector {
  return {
    kind: 'connector',
    name: 'open-meteo-forecast',
    method: 'GET',
    url: `${base}/v1/forecast`,
    description: 'Current weather for a latitude and longitude, from Open-Meteo',
    parameters: {
      path: [],
      query: [param('latitude', 'number'), param('longitude', 'number'), param('current'), param('temperature_unit')],
    },
    schema: {},
    auth: 'None',
  };
}

/** The seed's current-weather tool. */
export const currentWeather: Tool = {
  kind: 'tool',
  name: 'current-weather',
  connector: 'open-meteo-forecast',
  guidance: 'Gets the current temperature, the wind speed in km/h and the WMO weather code for a place.',
  bindings: { request: {}, query: { current: 'temperature_2m,wind_speed_10m,weather_code' }, path: {} },
  requiresApproval: false,
};

/** The orders API's get-order connector (auth Header). */
export function ordersGetOrder(base: string): Connector {
  return {
    kind: 'connector',
    name: 'orders-get-order',
    method: 'GET',
    url: `${base}/orders/{orderId}`,
    description: 'One order by id',
    parameters: { path: [param('orderId', 'string', true)], query: [] },
    schema: {},
    auth: 'Header',
  };
}

/** The get-order tool, sending the orders-api-key secret in X-Api-Key. */
export const getOrder: Tool = {
  kind: 'tool',
  name: 'get-order',
  connector: 'orders-get-order',
  guidance: 'Looks up one order.',
  bindings: { request: {}, query: {}, path: {} },
  auth: { header: 'X-Api-Key', secret: 'orders-api-key' },
  requiresApproval: false,
};

/** The orders API's refund connector: POST with a `{ amount, reason }` body. */
export function ordersRefundOrder(base: string): Connector {
  return {
    kind: 'connector',
    name: 'orders-refund-order',
    method: 'POST',
    url: `${base}/orders/{orderId}/refund`,
    description: 'Refunds an order',
    parameters: { path: [param('orderId', 'string', true)], query: [] },
    schema: {
      request: {
        type: 'object',
        properties: { amount: { type: 'number' }, reason: { type: 'string' } },
        required: ['amount', 'reason'],
        additionalProperties: false,
      },
    },
    auth: 'Header',
  };
}

/** The refund-order tool (needs approval; the gateway is called after it was given). */
export const refundOrder: Tool = {
  kind: 'tool',
  name: 'refund-order',
  connector: 'orders-refund-order',
  guidance: 'Refunds an order.',
  bindings: { request: {}, query: {}, path: {} },
  auth: { header: 'X-Api-Key', secret: 'orders-api-key' },
  requiresApproval: true,
};

/** A knowledge-base search connector: POST `{ query, partitionId }`. */
export function knowledgeSearch(base: string): Connector {
  return {
    kind: 'connector',
    name: 'knowledge-search',
    method: 'POST',
    url: `${base}/v1/knowledge/search`,
    description: 'Searches a knowledge base',
    parameters: { path: [], query: [] },
    schema: {
      request: {
        type: 'object',
        properties: { query: { type: 'string' }, partitionId: { type: 'string' } },
        required: ['query', 'partitionId'],
        additionalProperties: false,
      },
    },
    auth: 'None',
  };
}

/** The search-handbook tool of the ask-handbook interaction. */
export const searchHandbook: Tool = {
  kind: 'tool',
  name: 'search-handbook',
  connector: 'knowledge-search',
  guidance: 'Searches the employee handbook.',
  bindings: { request: {}, query: {}, path: {} },
  requiresApproval: false,
};
