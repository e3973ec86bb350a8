import { DIALECT_URIS, newAjv } from '@maitento/lang/json-schema';
import { RESERVED_HEADERS } from '@maitento/lang/reserved-headers';
import type { Ajv } from 'ajv';
import { cliErrors } from '../../errors.js';
import { type MtrValue, mtrFile, ref } from './mtr-text.js';

/** What `mt import openapi` was asked for, apart from where to read and write. */
export interface GenerateOptions {
  /** Prefix of every resource name; default the document's `info.title` in kebab case. */
  name?: string;
  tags?: string[];
  excludeTags?: string[];
  operations?: string[];
  excludeOperations?: string[];
  serverUrl?: string;
  /** False with `--no-approval`: writes do not require approval. */
  approval: boolean;
}

/** One generated file, its path relative to the config repo's root. */
export interface GeneratedFile {
  path: string;
  text: string;
}

/** One imported operation. */
export interface ImportedOperation {
  name: string;
  method: string;
  path: string;
  operationId?: string;
}

export interface Generated {
  name: string;
  files: GeneratedFile[];
  operations: ImportedOperation[];
  warnings: string[];
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;
const SUPPORTED = new Set(['get', 'put', 'post', 'delete', 'patch']);
const WRITES = new Set(['post', 'put', 'patch', 'delete']);
/** The longest tool name: MCP's SEP-986 and the model providers' limit. */
export const MAX_NAME = 64;
const MANY_TOOLS = 50;

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A string in the repo's file-name style: lowercase kebab case (`createSpecialEvent` → `create-special-event`). */
export function kebab(text: string, splitCamelCase = true): string {
  const words = splitCamelCase
    ? // Linear: `([A-Z]+)([A-Z][a-z])` backtracked over a run of capitals at each of its starts (1 MB: minutes).
      text.replace(/([a-z0-9])([A-Z])/g, '$1-$2').replace(/([A-Z])(?=[A-Z][a-z])/g, '$1-')
    : text;
  return words
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
}

function truncateName(name: string, max: number): string {
  return name.length <= max ? name : name.slice(0, max).replace(/-+$/, '');
}

/** Follows a local `$ref` (`#/components/...`) of the document. */
function resolveRef(doc: Obj, refText: string): unknown {
  let node: unknown = doc;
  for (const raw of refText.slice(2).split('/')) {
    const part = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    if (!isObj(node) && !Array.isArray(node)) return undefined;
    node = (node as Obj)[part];
  }
  return node;
}

/** An object of the document with its `$ref` followed (parameters, request bodies, responses). */
function deref(doc: Obj, value: unknown): unknown {
  let node = value;
  const seen = new Set<string>();
  while (isObj(node) && typeof node.$ref === 'string' && !seen.has(node.$ref)) {
    seen.add(node.$ref);
    node = resolveRef(doc, node.$ref);
  }
  return node;
}

/** The largest schema an import writes (its JSON), and the deepest: past either the import is refused. */
export const MAX_SCHEMA_BYTES = 1024 * 1024;
export const MAX_SCHEMA_DEPTH = 48;

/** Keywords whose values are data, not schemas: a `$ref` there is text. */
const DATA_KEYWORDS = new Set(['example', 'examples', 'enum', 'const', 'default']);

/**
 * Calls `onRef` with the target of every `$ref` of a schema, not looking into data keywords; `tooDeep` past
 * twice {@link MAX_SCHEMA_DEPTH} levels of the document (a property is two: `properties`, then its name).
 */
function eachRef(node: unknown, onRef: (target: string) => void, tooDeep: () => Error, depth = 0): void {
  if (depth > 2 * MAX_SCHEMA_DEPTH) throw tooDeep();
  if (Array.isArray(node)) {
    for (const item of node) eachRef(item, onRef, tooDeep, depth + 1);
    return;
  }
  if (!isObj(node)) return;
  if (typeof node.$ref === 'string') onRef(node.$ref);
  for (const [key, value] of Object.entries(node)) {
    if (key !== '$ref' && key !== 'xml' && key !== 'discriminator' && !DATA_KEYWORDS.has(key)) {
      eachRef(value, onRef, tooDeep, depth + 1);
    }
  }
}

/** Whether a schema is `readOnly`, itself or through the `$ref`s it follows. */
function isReadOnly(doc: Obj, node: unknown): boolean {
  const seen = new Set<string>();
  for (let at = node; isObj(at); ) {
    if (at.readOnly === true) return true;
    if (typeof at.$ref !== 'string' || seen.has(at.$ref)) return false;
    seen.add(at.$ref);
    at = resolveRef(doc, at.$ref);
  }
  return false;
}

/**
 * A schema of the document made self-contained for a connector, each schema of the document it refers to written
 * once: one referred to once (and not on a cycle) inlined where it is referred to, one referred to more than once
 * (or on a cycle: such a schema is always referred to at least twice) put under `$defs` and referred to there. So
 * the output grows with the document, not with the number of paths through it (a schema referring twice to the
 * next, 30 deep, was 2^30 copies when every `$ref` was inlined). `xml` and `discriminator` are stripped, and for
 * inputs the `readOnly` properties dropped. Past {@link MAX_SCHEMA_DEPTH} levels or {@link MAX_SCHEMA_BYTES} the
 * import is refused (`api:import:schema-too-large`).
 */
function inlineSchema(doc: Obj, schema: unknown, input: boolean, source: string, where: string): unknown {
  // How often each schema is referred to: from the schema, and once from each schema it reaches.
  const counts = new Map<string, number>();
  const queue: string[] = [];
  const count = (target: string) => {
    const seen = counts.get(target);
    counts.set(target, (seen ?? 0) + 1);
    if (seen === undefined) queue.push(target);
  };
  const tooLarge = (reason: string) => cliErrors.create('api:import:schema-too-large', { source, where, reason });
  const tooDeep = () => tooLarge(`it nests deeper than ${MAX_SCHEMA_DEPTH} levels`);
  eachRef(schema, count, tooDeep);
  for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
    eachRef(resolveRef(doc, next), count, tooDeep);
  }

  const names = new Map<string, string>();
  const defs: Obj = {};
  const pending: string[] = [];
  const defName = (target: string): string => {
    const known = names.get(target);
    if (known !== undefined) return known;
    const last = decodeURIComponent(target.slice(target.lastIndexOf('/') + 1))
      .replace(/~1/g, '/')
      .replace(/~0/g, '~');
    const stem = last.replace(/[^A-Za-z0-9_.-]/g, '_') || 'schema';
    const taken = new Set(names.values());
    let name = stem;
    for (let n = 2; taken.has(name); n++) name = `${stem}-${n}`;
    names.set(target, name);
    pending.push(target);
    return name;
  };
  const walk = (node: unknown, depth: number): unknown => {
    if (depth > MAX_SCHEMA_DEPTH) throw tooDeep();
    if (Array.isArray(node)) return node.map((item) => walk(item, depth + 1));
    if (!isObj(node)) return node;
    if (typeof node.$ref === 'string') {
      const target = node.$ref;
      const { $ref: _, ...siblings } = node;
      const rest = Object.keys(siblings).length === 0 ? undefined : (walk(siblings, depth) as Obj);
      if ((counts.get(target) ?? 0) > 1) return { $ref: `#/$defs/${defName(target)}`, ...rest };
      const resolved = walk(resolveRef(doc, target), depth);
      return rest === undefined || !isObj(resolved) ? resolved : { ...resolved, ...rest };
    }
    const out: Obj = {};
    for (const [key, value] of Object.entries(node)) {
      if (key === 'xml' || key === 'discriminator') continue;
      if (DATA_KEYWORDS.has(key)) {
        out[key] = value;
        continue;
      }
      if (key === 'properties' && isObj(value)) {
        const props: Obj = {};
        const dropped: string[] = [];
        for (const [prop, sub] of Object.entries(value)) {
          if (input && isReadOnly(doc, sub)) dropped.push(prop);
          else props[prop] = walk(sub, depth + 2);
        }
        out[key] = props;
        if (dropped.length > 0 && Array.isArray(node.required)) {
          out.required = (node.required as unknown[]).filter((r) => !dropped.includes(String(r)));
        }
        continue;
      }
      if (key === 'required' && 'required' in out) continue;
      out[key] = walk(value, depth + 1);
    }
    return out;
  };
  const root = walk(schema, 0);
  for (let next = pending.shift(); next !== undefined; next = pending.shift()) {
    defs[names.get(next) as string] = walk(resolveRef(doc, next), 2);
  }
  const result = Object.keys(defs).length === 0 || !isObj(root) ? root : { ...root, $defs: defs };
  if (JSON.stringify(result).length > MAX_SCHEMA_BYTES) {
    throw tooLarge(`it is larger than ${MAX_SCHEMA_BYTES / (1024 * 1024)} MiB written out`);
  }
  return result;
}

function jsonMedia(content: unknown): { type: string; schema: unknown } | undefined {
  if (!isObj(content)) return undefined;
  for (const [type, media] of Object.entries(content)) {
    const base = type.split(';')[0]?.trim().toLowerCase() ?? '';
    if (base === 'application/json' || base.endsWith('+json')) {
      return { type, schema: isObj(media) ? (media.schema ?? {}) : {} };
    }
  }
  return undefined;
}

function substituteVariables(server: Obj): string {
  let url = String(server.url ?? '');
  const variables = isObj(server.variables) ? server.variables : {};
  for (const [name, variable] of Object.entries(variables)) {
    const value = isObj(variable) && variable.default !== undefined ? String(variable.default) : '';
    url = url.split(`{${name}}`).join(value);
  }
  return url;
}

/** The base URL of every connector: `--server-url`, else the first server (variables at their defaults). */
function baseUrl(doc: Obj, options: GenerateOptions, source: string, documentUrl: string | undefined): string {
  let url = options.serverUrl;
  if (url === undefined) {
    const servers = Array.isArray(doc.servers) ? doc.servers : [];
    const first = servers[0];
    if (!isObj(first) || typeof first.url !== 'string') throw cliErrors.create('api:import:server-missing', { source });
    url = substituteVariables(first);
    if (!/^https?:\/\//i.test(url)) {
      if (documentUrl === undefined) throw cliErrors.create('api:import:server-relative', { source, url });
      url = new URL(url, documentUrl).toString();
    }
  }
  return url.replace(/\/+$/, '');
}

interface AuthChoice {
  header?: string;
  secret?: string;
  todo?: string;
}

/** The connector's auth from the operation's (or the document's) security: the first requirement a header can carry. */
function chooseAuth(doc: Obj, operation: Obj, prefix: string): AuthChoice {
  const requirements = Array.isArray(operation.security)
    ? operation.security
    : Array.isArray(doc.security)
      ? doc.security
      : [];
  const schemes = isObj(doc.components) && isObj(doc.components.securitySchemes) ? doc.components.securitySchemes : {};
  const unsupported: string[] = [];
  for (const requirement of requirements) {
    if (!isObj(requirement)) continue;
    const names = Object.keys(requirement);
    if (names.length === 0) return {}; // `{}`: no credential needed
    if (names.length > 1) {
      unsupported.push(`${names.join(' + ')} (several credentials at once)`);
      continue;
    }
    const name = names[0] as string;
    const scheme = deref(doc, schemes[name]);
    if (!isObj(scheme)) continue;
    const secret = `${prefix}-${kebab(name)}`;
    if (scheme.type === 'apiKey' && scheme.in === 'header' && typeof scheme.name === 'string') {
      return { header: scheme.name, secret };
    }
    if (scheme.type === 'http' && typeof scheme.scheme === 'string') {
      const kind = scheme.scheme.toLowerCase();
      if (kind === 'bearer' || kind === 'basic') return { header: 'Authorization', secret };
    }
    const what =
      scheme.type === 'apiKey'
        ? `apiKey in ${String(scheme.in)}`
        : scheme.type === 'http'
          ? `http ${String(scheme.scheme)}`
          : String(scheme.type);
    unsupported.push(`${name} (${what})`);
  }
  if (unsupported.length > 0) {
    return {
      todo: `TODO auth: ${unsupported.join(', ')} cannot be sent by a connector yet; add a header credential by hand if the API takes one`,
    };
  }
  return {};
}

/**
 * Headers that carry a credential in the document: every `apiKey` scheme's header, and `Authorization`. A header
 * parameter by one of these names is never a tool input; the credential is the tool's `auth` and a secret.
 */
function credentialHeaders(doc: Obj): Map<string, string> {
  const out = new Map<string, string>([['authorization', 'the HTTP credential header']]);
  const schemes = isObj(doc.components) && isObj(doc.components.securitySchemes) ? doc.components.securitySchemes : {};
  for (const [name, value] of Object.entries(schemes)) {
    const scheme = deref(doc, value);
    if (isObj(scheme) && scheme.type === 'apiKey' && scheme.in === 'header' && typeof scheme.name === 'string') {
      out.set(scheme.name.toLowerCase(), `the credential of the security scheme ${name}`);
    }
  }
  return out;
}

interface Parameter {
  name: string;
  in: string;
  description?: string;
  required?: boolean;
  style?: string;
  explode?: boolean;
  schema?: unknown;
  content?: unknown;
}

const PARAM_NAME = /^[A-Za-z0-9_-]+$/;
const DEFAULT_STYLE: Record<string, string> = { path: 'simple', query: 'form', header: 'simple', cookie: 'form' };
const SCALAR_TYPES = new Set(['string', 'number', 'integer', 'boolean']);

function paramType(doc: Obj, schema: unknown): string | undefined {
  const resolved = deref(doc, schema);
  if (!isObj(resolved)) return 'string';
  let type = resolved.type;
  if (Array.isArray(type)) type = type.filter((t) => t !== 'null');
  if (Array.isArray(type)) type = type.length === 1 ? type[0] : undefined;
  if (type === undefined) return 'string';
  return typeof type === 'string' && SCALAR_TYPES.has(type) ? type : undefined;
}

interface OperationRef {
  method: string;
  path: string;
  operation: Obj;
  pathItem: Obj;
}

function operationsOf(doc: Obj): OperationRef[] {
  const out: OperationRef[] = [];
  const paths = isObj(doc.paths) ? doc.paths : {};
  for (const [path, item] of Object.entries(paths)) {
    const pathItem = deref(doc, item);
    if (!isObj(pathItem)) continue;
    for (const method of METHODS) {
      const operation = pathItem[method];
      if (isObj(operation)) out.push({ method, path, operation, pathItem });
    }
  }
  return out;
}

function xMaitento(operation: Obj): Obj {
  return isObj(operation['x-maitento']) ? operation['x-maitento'] : {};
}

function checkFilter(what: string, asked: string[] | undefined, valid: Set<string>): void {
  if (asked === undefined) return;
  const unknown = asked.filter((a) => !valid.has(a));
  if (unknown.length > 0) {
    throw cliErrors.create('api:import:filter-unknown', {
      what,
      names: unknown.join(', '),
      valid: [...valid].sort().join(', ') || '(none)',
    });
  }
}

let ajv2020: Ajv | undefined;
// Documents repeat schemas (one response shape for many operations): each distinct one is compiled once.
const verdicts = new Map<string, string | undefined>();

/** Why ajv (2020-12) cannot compile the schema, or undefined when it can. */
function compileProblem(schema: unknown): string | undefined {
  const key = JSON.stringify(schema);
  if (verdicts.has(key)) return verdicts.get(key);
  ajv2020 ??= newAjv('2020-12', { strict: false, allErrors: true });
  let problem: string | undefined;
  try {
    ajv2020.compile(schema as object);
  } catch (error) {
    problem = (error as Error).message;
  }
  ajv2020.removeSchema();
  verdicts.set(key, problem);
  return problem;
}

/** The connectors and tools of an OpenAPI 3.1 document, one pair per operation, as `.mtr` file texts. */
export function generate(doc: Obj, options: GenerateOptions, source: string, documentUrl?: string): Generated {
  const warnings: string[] = [];
  const info = isObj(doc.info) ? doc.info : {};
  // A title is words (`Swagger Petstore - OpenAPI 3.0`), not camel case: `OpenAPI` stays one word.
  const prefix = options.name ?? kebab(String(info.title ?? 'api'), false);
  if (!/^[a-z][a-z0-9]*(-[a-z0-9]+)*$/.test(prefix)) {
    throw cliErrors.create('api:import:name-invalid', {
      name: JSON.stringify(prefix),
      reason: 'it must be lowercase kebab case starting with a letter',
    });
  }
  if (prefix.length > MAX_NAME - 2) {
    throw cliErrors.create('api:import:name-invalid', {
      name: JSON.stringify(prefix),
      reason: `it must leave room for the operation's name within ${MAX_NAME} characters`,
    });
  }
  const all = operationsOf(doc);
  const tags = new Set(all.flatMap((o) => (Array.isArray(o.operation.tags) ? o.operation.tags.map(String) : [])));
  if (Array.isArray(doc.tags)) for (const t of doc.tags) if (isObj(t) && typeof t.name === 'string') tags.add(t.name);
  const ids = new Set(all.map((o) => o.operation.operationId).filter((id): id is string => typeof id === 'string'));
  checkFilter('tag', options.tags, tags);
  checkFilter('tag', options.excludeTags, tags);
  checkFilter('operationId', options.operations, ids);
  checkFilter('operationId', options.excludeOperations, ids);
  const base = baseUrl(doc, options, source, documentUrl);
  const credentials = credentialHeaders(doc);

  const files: GeneratedFile[] = [];
  const operations: ImportedOperation[] = [];
  const taken = new Map<string, string>();
  for (const { method, path, operation, pathItem } of all) {
    const id = typeof operation.operationId === 'string' ? operation.operationId : undefined;
    const label = `${method.toUpperCase()} ${path}${id ? ` (${id})` : ''}`;
    const opTags = Array.isArray(operation.tags) ? operation.tags.map(String) : [];
    if (options.tags && !opTags.some((t) => options.tags?.includes(t))) continue;
    if (options.excludeTags && opTags.some((t) => options.excludeTags?.includes(t))) continue;
    if (options.operations && (id === undefined || !options.operations.includes(id))) continue;
    if (options.excludeOperations && id !== undefined && options.excludeOperations.includes(id)) continue;
    const x = xMaitento(operation);
    if (x.skip === true) continue;
    const skip = (why: string) => warnings.push(`${label} skipped: ${why}`);
    if (!SUPPORTED.has(method)) {
      skip(`a connector's method is GET, POST, PUT, PATCH or DELETE, not ${method.toUpperCase()}`);
      continue;
    }

    // The name: x-maitento.name, else the operationId, else method-path; prefixed, ≤ 64, numbered on a clash.
    const own = typeof x.name === 'string' ? x.name : (id ?? `${method}-${path}`);
    const stem = truncateName(`${prefix}-${kebab(own)}`, MAX_NAME);
    let name = stem;
    for (let n = 2; taken.has(name); n++) name = `${truncateName(stem, MAX_NAME - String(n).length - 1)}-${n}`;
    if (name !== stem) warnings.push(`${label} is named ${name}: ${stem} is taken by ${taken.get(stem)}`);

    // Parameters: the operation's over its path item's, by name and place.
    const params = new Map<string, Parameter>();
    for (const list of [pathItem.parameters, operation.parameters]) {
      if (!Array.isArray(list)) continue;
      for (const p of list) {
        const param = deref(doc, p);
        if (isObj(param) && typeof param.name === 'string') params.set(`${param.in}:${param.name}`, param as never);
      }
    }
    const pathParams: MtrValue[] = [];
    const queryParams: MtrValue[] = [];
    const headerParams: MtrValue[] = [];
    let problem: string | undefined;
    for (const param of params.values()) {
      const where = `${param.in} parameter ${param.name}`;
      const headerName = param.in === 'header' ? param.name.toLowerCase() : '';
      if (param.in === 'cookie') problem ??= `${where}: connectors send no cookies`;
      else if (param.in === 'header' && credentials.has(headerName)) {
        // OpenAPI ignores an Authorization parameter too; either way the credential is never a tool input.
        warnings.push(`${label}: ${where} left out: it is ${credentials.get(headerName)}, never a tool input`);
      } else if (param.in === 'header' && (headerName === 'accept' || Object.hasOwn(RESERVED_HEADERS, headerName))) {
        const why = `the gateway sends ${param.name} itself`;
        if (param.required) problem ??= `required ${where}: ${why}`;
        else warnings.push(`${label}: optional ${where} left out: ${why}`);
      } else if (!PARAM_NAME.test(param.name)) problem ??= `${where}: a name of letters, digits, _ and - only`;
      else if (param.style !== undefined && param.style !== DEFAULT_STYLE[param.in]) {
        problem ??= `${where} has style ${param.style}; only the default style is sent`;
      } else if (param.content !== undefined) problem ??= `${where} is given by content, not by a schema`;
      else {
        const type = paramType(doc, param.schema);
        if (type === undefined) problem ??= `${where} is not a string, number, integer or boolean`;
        else {
          const entry: Record<string, MtrValue> = { name: param.name };
          if (typeof param.description === 'string' && param.description.trim() !== '') {
            entry.description = param.description.trim();
          }
          if (type !== 'string') entry.type = type;
          if (param.in !== 'path' && param.required === true) entry.required = true;
          (param.in === 'path' ? pathParams : param.in === 'query' ? queryParams : headerParams).push(entry);
        }
      }
    }
    if (problem !== undefined) {
      skip(problem);
      continue;
    }

    const inline = (schema: unknown, input: boolean, what: string): unknown => {
      const inlined = inlineSchema(doc, schema, input, source, `${label} ${what}`);
      return isObj(inlined) ? { $schema: DIALECT_URIS['2020-12'], ...inlined } : inlined;
    };
    let request: unknown;
    const body = deref(doc, operation.requestBody);
    if (isObj(body)) {
      const media = jsonMedia(body.content);
      if (media === undefined) {
        const types = isObj(body.content) ? Object.keys(body.content).join(', ') : 'none';
        skip(`its request body is not JSON (${types})`);
        continue;
      }
      request = inline(media.schema, true, 'request body');
    }
    let response: unknown;
    const responses = isObj(operation.responses) ? operation.responses : {};
    for (const status of Object.keys(responses).sort()) {
      if (!/^2(\d\d|XX)$/i.test(status)) continue;
      const media = jsonMedia((deref(doc, responses[status]) as Obj | undefined)?.content);
      if (media !== undefined) response = inline(media.schema, false, `response ${status}`);
      break;
    }
    const compileIssue = [request, response]
      .filter((s) => s !== undefined)
      .map(compileProblem)
      .find((p) => p !== undefined);
    if (compileIssue !== undefined) {
      skip(`its schema does not compile as JSON Schema 2020-12: ${compileIssue}`);
      continue;
    }

    const auth = chooseAuth(doc, operation, prefix);
    const summary = typeof operation.summary === 'string' ? operation.summary.trim() : '';
    const description = typeof operation.description === 'string' ? operation.description.trim() : '';
    const oneLine = (s: string) => s.replace(/\s+/g, ' ').trim();
    const connectorDescription = oneLine(summary || description || `${method.toUpperCase()} ${path}`).slice(0, 500);
    const guidance = [summary, description].filter((s) => s !== '').join('\n\n') || connectorDescription;

    const comments = [`Generated by mt import openapi from ${source}: ${label}.`];
    const connector: [string, MtrValue][] = [
      ['method', method.toUpperCase()],
      ['url', `${base}${path}`],
      ['description', connectorDescription],
    ];
    if (auth.header !== undefined) connector.push(['auth', 'Header']);
    if (pathParams.length > 0) connector.push(['parameters.path', pathParams]);
    if (queryParams.length > 0) connector.push(['parameters.query', queryParams]);
    if (headerParams.length > 0) connector.push(['parameters.header', headerParams]);
    if (request !== undefined) connector.push(['schema.request', request as MtrValue]);
    if (response !== undefined) connector.push(['schema.response', response as MtrValue]);
    const tool: [string, MtrValue][] = [
      ['connector', ref(name)],
      ['guidance', guidance],
    ];
    if (auth.header !== undefined && auth.secret !== undefined) {
      tool.push(['auth', { header: auth.header, secret: ref(auth.secret) }]);
    }
    if (options.approval && WRITES.has(method)) tool.push(['requiresApproval', true]);
    let connectorText: string;
    let toolText: string;
    try {
      connectorText = mtrFile(auth.todo ? [...comments, auth.todo] : comments, connector);
      toolText = mtrFile(comments, tool);
    } catch (error) {
      skip(`its generated file does not parse: ${(error as Error).message}`);
      continue;
    }
    if (auth.todo) warnings.push(`${label}: ${auth.todo.replace(/^TODO auth: /, 'auth not mapped: ')}`);
    taken.set(name, label);
    files.push({ path: `connectors/open-api/${name}.mtr`, text: connectorText });
    files.push({ path: `external-operations/open-api/${name}.mtr`, text: toolText });
    operations.push({ name, method: method.toUpperCase(), path, ...(id ? { operationId: id } : {}) });
  }
  if (operations.length > MANY_TOOLS) {
    warnings.push(
      `${operations.length} tools: models choose worse among more than ${MANY_TOOLS}; consider --tags or --operations`,
    );
  }
  files.sort((a, b) => a.path.localeCompare(b.path));
  return { name: prefix, files, operations, warnings };
}
