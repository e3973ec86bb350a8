import { addressBlockedError } from '@maitento/egress';
import type { Connector, ConnectorParameter, Json, JsonSchema, Tool } from '@maitento/lang';
import type { ValidateFunction } from 'ajv';
import { gatewayErrors } from '../errors.js';
import { compileUrlTemplate, type UrlTemplate } from '../steps/build-url.js';
import { validatorFor } from './validators.js';

/** Everything about a connector that does not change between calls, computed once. */
export interface ConnectorPlan {
  readonly connector: Connector;
  readonly template: UrlTemplate;
  /** The platform origin a platform path (`/v1/...`) was resolved against. */
  readonly platformOrigin: string | undefined;
  readonly pathParams: ReadonlyMap<string, ConnectorParameter>;
  readonly queryParams: readonly ConnectorParameter[];
  readonly queryByName: ReadonlyMap<string, ConnectorParameter>;
  readonly headerParams: readonly ConnectorParameter[];
  readonly headerByName: ReadonlyMap<string, ConnectorParameter>;
  readonly requestValidator?: ValidateFunction;
  readonly responseValidator?: ValidateFunction;
  /** Top-level body fields the model may send, or undefined when the schema lets any through. */
  readonly requestFields?: ReadonlySet<string>;
}

/** A tool on its connector, with its fixed bindings sorted by where they go. */
export interface ToolPlan {
  readonly tool: Tool;
  readonly connector: ConnectorPlan;
  /** Fixed body targets split on `/`. */
  readonly fixedRequest: ReadonlyArray<readonly [string[], Json]>;
  readonly fixedRequestTargets: ReadonlySet<string>;
  readonly fixedQuery: ReadonlyMap<string, Json>;
  readonly fixedPath: ReadonlyMap<string, Json>;
  /** The last credential's first-hop headers, reused while the same credential keeps coming (the common case). */
  credentialHeaders?: {
    readonly header: string;
    readonly value: string;
    readonly headers: Readonly<Record<string, string>>;
  };
}

const connectorPlans = new WeakMap<Connector, ConnectorPlan>();
const toolPlans = new WeakMap<Tool, ToolPlan>();

function requestFields(schema: Connector['schema']['request']): Set<string> | undefined {
  if (typeof schema !== 'object' || schema === null) return undefined;
  const props = schema.properties;
  if (typeof props !== 'object' || props === null || Array.isArray(props)) return undefined;
  if (schema.additionalProperties !== undefined && schema.additionalProperties !== false) return undefined;
  return new Set(Object.keys(props));
}

/**
 * Whether a connector's url is a path on the platform (`/v1/...`, only for auth = "Maitento"), as the compiler
 * judges it (@maitento/lang's connector checks; not imported: the gateway loads no compiler code).
 */
function isPlatformPath(url: string): boolean {
  return url.startsWith('/') && !url.startsWith('//');
}

function templateOf(connector: Connector, platformOrigin: string | undefined): UrlTemplate {
  // A path on the platform (`url = "/v1/..."`, only for auth = "Maitento") is resolved against the platform's own
  // origin, the one this gateway was given; without one there is nothing it may call.
  let url = connector.url;
  if (isPlatformPath(url)) {
    if (platformOrigin === undefined || connector.auth !== 'Maitento') {
      throw gatewayErrors.create('api:gateway:platform-unset', { connector: connector.name, url });
    }
    url = platformOrigin + url;
  }
  try {
    return compileUrlTemplate(url);
  } catch {
    // Deploy refuses such URLs; a record that bypassed it is treated as an address nobody may call.
    throw addressBlockedError(connector.url);
  }
}

function compiled(connector: Connector, which: 'request' | 'response', schema: JsonSchema | undefined) {
  if (schema === undefined) return undefined;
  try {
    return validatorFor(schema);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw gatewayErrors.create('api:gateway:schema-invalid', { connector: connector.name, which, reason });
  }
}

/**
 * The plan of `connector`, built on first use and kept while the object lives; a platform path's plan is built again
 * when the platform origin differs from the one it was resolved against.
 */
export function connectorPlan(connector: Connector, platformOrigin?: string): ConnectorPlan {
  let plan = connectorPlans.get(connector);
  if (plan === undefined || (plan.platformOrigin !== platformOrigin && isPlatformPath(connector.url))) {
    const { request, response } = connector.schema;
    plan = {
      connector,
      template: templateOf(connector, platformOrigin),
      platformOrigin,
      pathParams: new Map(connector.parameters.path.map((p) => [p.name, p])),
      queryParams: connector.parameters.query,
      queryByName: new Map(connector.parameters.query.map((p) => [p.name, p])),
      headerParams: connector.parameters.header ?? [],
      headerByName: new Map((connector.parameters.header ?? []).map((p) => [p.name, p])),
      requestValidator: compiled(connector, 'request', request),
      responseValidator: compiled(connector, 'response', response),
      requestFields: requestFields(request),
    };
    connectorPlans.set(connector, plan);
  }
  return plan;
}

/** The plan of `tool` on `connector` (a platform path resolved against `platformOrigin`), built on first use and kept while both objects live. */
export function toolPlan(tool: Tool, connector: Connector, platformOrigin?: string): ToolPlan {
  let plan = toolPlans.get(tool);
  const connectorPlanNow = connectorPlan(connector, platformOrigin);
  if (plan === undefined || plan.connector !== connectorPlanNow) {
    plan = {
      tool,
      connector: connectorPlanNow,
      fixedRequest: Object.entries(tool.bindings.request).map(([target, value]) => [target.split('/'), value] as const),
      fixedRequestTargets: new Set(Object.keys(tool.bindings.request)),
      fixedQuery: new Map(Object.entries(tool.bindings.query)),
      fixedPath: new Map(Object.entries(tool.bindings.path)),
    };
    toolPlans.set(tool, plan);
  }
  return plan;
}
