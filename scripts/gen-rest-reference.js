#!/usr/bin/env node
// Writes docs/rest-reference.md from the OpenAPI document the server serves (`npm run docs:rest`): it makes
// the server with createServer on an in-memory PGlite database and asks it for GET /openapi.json.
// test/docs-reference.test.ts regenerates it in memory and fails when the file differs. It also writes the table of
// docs/roles.md (which key role may call each operation), which test/roles-doc.test.ts keeps equal the same way.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

/** The name of a `$ref`, such as `Secret` for `#/components/schemas/Secret`. */
function refName(ref) {
  return ref.split('/').at(-1);
}

/** A short type of a JSON Schema: a component's name (a link to it), `Name[]`, `string`, `"a" \| "b"`, `object`. */
function typeOf(schema) {
  if (!schema) return 'any';
  if (schema.$ref) return `[${refName(schema.$ref)}](#${refName(schema.$ref).toLowerCase()})`;
  if (schema.enum) return schema.enum.map((v) => JSON.stringify(v)).join(' \\| ');
  if (schema.const !== undefined) return JSON.stringify(schema.const);
  for (const key of ['anyOf', 'oneOf']) {
    if (schema[key]) return schema[key].map(typeOf).join(' \\| ');
  }
  if (schema.allOf) return schema.allOf.map(typeOf).join(' & ');
  const type = Array.isArray(schema.type) ? schema.type.join(' \\| ') : schema.type;
  if (type === 'array') return `${typeOf(schema.items)}[]`;
  if (type === 'object' && schema.additionalProperties && !schema.properties) {
    return `map of ${typeof schema.additionalProperties === 'object' ? typeOf(schema.additionalProperties) : 'any'}`;
  }
  return type ?? 'any';
}

/** One line per property of an object schema: `name` (type, required). */
function fieldLines(schema, indent) {
  if (!schema?.properties) return [];
  const required = new Set(schema.required ?? []);
  return Object.entries(schema.properties).map(([name, prop]) => {
    const description = prop.description ? `: ${prop.description}` : '';
    return `${indent}- \`${name}\` ${typeOf(prop)}${required.has(name) ? ', required' : ''}${description}`;
  });
}

/** The fields of an inline object schema, or of the items of an inline array of objects. */
function inlineFields(schema, indent) {
  if (!schema || schema.$ref) return [];
  if (schema.type === 'array' && schema.items && !schema.items.$ref) return fieldLines(schema.items, indent);
  return fieldLines(schema, indent);
}

/** The schema of a JSON content, or undefined. */
function jsonSchema(content) {
  if (!content) return undefined;
  const media = content['application/json'] ?? Object.values(content)[0];
  return media?.schema;
}

/** The Markdown of one operation. */
function operationMarkdown(method, path, op) {
  const lines = [`### ${method.toUpperCase()} ${path}`, ''];
  if (op.summary) lines.push(op.summary, '');
  if (op.description && op.description !== op.summary) lines.push(op.description, '');
  lines.push(`- operationId: \`${op.operationId ?? '(none)'}\``);
  if (op.tags?.length) lines.push(`- tags: ${op.tags.join(', ')}`);
  if (op.security && op.security.length === 0) lines.push('- no API key needed');
  if (op['x-roles']) {
    const only = op['x-roles-namespace'] ? ` of the \`${op['x-roles-namespace']}\` namespace` : '';
    lines.push(`- key roles: ${op['x-roles'].join(', ')}${only} ([roles.md](roles.md))`);
  }
  const params = op.parameters ?? [];
  if (params.length) {
    lines.push('- parameters:');
    for (const p of params) {
      const description = p.description ? `: ${p.description}` : '';
      lines.push(`  - \`${p.name}\` (${p.in}) ${typeOf(p.schema)}${p.required ? ', required' : ''}${description}`);
    }
  }
  if (op.requestBody) {
    const schema = jsonSchema(op.requestBody.content);
    const media = Object.keys(op.requestBody.content ?? {}).join(', ');
    lines.push(`- body (${media}${op.requestBody.required ? ', required' : ''}): ${typeOf(schema)}`);
    lines.push(...inlineFields(schema, '  '));
  }
  lines.push('- responses:');
  for (const [status, response] of Object.entries(op.responses ?? {})) {
    // An error status: the Error schema, with the codes it carries (one example of each).
    const errorCodes = Object.values(response.content?.['application/json']?.examples ?? {}).map((e) => e.value?.code);
    if (Number(status) >= 400 && errorCodes.length) {
      lines.push(
        `  - ${status}: ${typeOf(jsonSchema(response.content))}: ${errorCodes.map((c) => `\`${c}\``).join(', ')}`,
      );
      continue;
    }
    const schema = jsonSchema(response.content);
    const media = Object.keys(response.content ?? {});
    const shape = schema ? typeOf(schema) : media.length ? media.join(', ') : 'no body';
    const description =
      response.description && response.description !== 'Default Response' ? ` (${response.description})` : '';
    lines.push(`  - ${status}: ${shape}${description}`);
    lines.push(...inlineFields(schema, '    '));
    // A stream's events (the media type's x-event-schema) and the headers an answer may carry.
    for (const [type, mediaType] of Object.entries(response.content ?? {})) {
      if (mediaType['x-event-schema'])
        lines.push(`    - each event of ${type}: ${typeOf(mediaType['x-event-schema'])}`);
    }
    for (const [name, header] of Object.entries(response.headers ?? {})) {
      lines.push(`    - header \`${name}\`${header.description ? `: ${header.description}` : ''}`);
    }
  }
  return lines;
}

/** The Markdown of docs/rest-reference.md, from the server's OpenAPI document. */
export function restReference(doc) {
  const operations = [];
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    for (const method of METHODS) if (item[method]) operations.push({ path, method, op: item[method] });
  }
  const groups = new Map();
  for (const o of operations) {
    const tag = o.op.tags?.[0] ?? 'other';
    if (!groups.has(tag)) groups.set(tag, []);
    groups.get(tag).push(o);
  }
  const lines = [
    "<!-- Generated by `npm run docs:rest` (scripts/gen-rest-reference.js) from the server's GET /openapi.json. Do not edit: change the route schemas and run it again. -->",
    '',
    '# REST API reference',
    '',
    `${doc.info?.title ?? 'API'} ${doc.info?.version ?? ''}: every operation of the OpenAPI document the server serves at`,
    '`GET /openapi.json`. The guide (keys, errors, event streams, idempotency) is [rest-api.md](rest-api.md).',
    'Each error status an operation can answer is listed with the codes of its `Error` (see [errors.md](errors.md));',
    'the document itself has an example of each request body, answer and error code.',
    '',
    '## Operations',
    '',
  ];
  for (const [tag, list] of groups) {
    lines.push(`- ${tag}: ${list.map((o) => `\`${o.method.toUpperCase()} ${o.path}\``).join(', ')}`);
  }
  for (const [tag, list] of groups) {
    lines.push('', `## ${tag}`);
    for (const o of list) {
      lines.push('', ...operationMarkdown(o.method, o.path, o.op));
    }
  }
  const schemas = doc.components?.schemas ?? {};
  if (Object.keys(schemas).length) {
    lines.push('', '## Schemas', '', 'The named schemas (`components.schemas`), by name.');
    for (const [name, schema] of Object.entries(schemas).sort(([a], [b]) => a.localeCompare(b))) {
      lines.push('', `### ${name}`, '');
      if (schema.description) lines.push(schema.description, '');
      const fields = fieldLines(schema, '');
      lines.push(...(fields.length ? fields : [`${typeOf(schema)}`]));
    }
  }
  return `${lines.join('\n')}\n`;
}

const ROLES = ['admin', 'user', 'runner', 'approver'];
const ROLES_START =
  "<!-- roles-table: generated by `npm run docs:rest` from the routes' declared roles; do not edit -->";
const ROLES_END = '<!-- roles-table end -->';

/** The table of docs/roles.md: every `/v1` operation and the key roles that may call it (its `x-roles`). */
export function rolesTable(doc) {
  const lines = [
    ROLES_START,
    '',
    `| Operation | ${ROLES.join(' | ')} |`,
    `| --- | ${ROLES.map(() => ':-:').join(' | ')} |`,
  ];
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    for (const method of METHODS) {
      const op = item[method];
      if (!op?.['x-roles']) continue;
      const yes = op['x-roles-namespace'] ? `yes (\`${op['x-roles-namespace']}\`)` : 'yes';
      const marks = ROLES.map((role) => (op['x-roles'].includes(role) ? yes : ''));
      lines.push(`| \`${method.toUpperCase()} ${path}\` | ${marks.join(' | ')} |`);
    }
  }
  lines.push('', ROLES_END);
  return lines.join('\n');
}

/** `page` (docs/roles.md) with its generated table replaced by `table`. */
export function withRolesTable(page, table) {
  const start = page.indexOf(ROLES_START);
  const end = page.indexOf(ROLES_END);
  if (start < 0 || end < start) throw new Error('docs/roles.md has no roles-table markers');
  return page.slice(0, start) + table + page.slice(end + ROLES_END.length);
}

/** The OpenAPI document of a server made with `createServer` on `db`. */
export async function servedOpenApi(createServer, db) {
  const app = await createServer({ db, secretKey: Buffer.alloc(32, 7), logger: false, onBootstrapKey: () => {} });
  try {
    const res = await app.inject({ method: 'GET', url: '/openapi.json' });
    if (res.statusCode !== 200) throw new Error(`GET /openapi.json answered ${res.statusCode}: ${res.body}`);
    return res.json();
  } finally {
    await app.close();
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { createServer } = await import('../packages/server/dist/index.js');
  const { createPgliteDb } = await import('../packages/store/dist/index.js');
  const db = await createPgliteDb();
  try {
    const doc = await servedOpenApi(createServer, db);
    const target = fileURLToPath(new URL('../docs/rest-reference.md', import.meta.url));
    writeFileSync(target, restReference(doc));
    console.error(`wrote ${target}`);
    const roles = fileURLToPath(new URL('../docs/roles.md', import.meta.url));
    writeFileSync(roles, withRolesTable(readFileSync(roles, 'utf8'), rolesTable(doc)));
    console.error(`wrote the table of ${roles}`);
  } finally {
    await db.close();
  }
}
