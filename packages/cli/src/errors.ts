import { defineErrors } from '@maitento/errors';

/** The `mt` CLI's own error codes; API errors keep the server's or the SDK's code. */
export const cliErrors = defineErrors({
  'api:cli:failed': {
    status: 500,
    message: '{message}',
  },
  'api:cli:key-missing': {
    status: 401,
    message: 'no API key to send to {url}',
    hint: 'pass --key KEY, set MT_API_KEY, or run `mt login`',
  },
  'api:cli:api-url-invalid': {
    status: 400,
    message: 'the server URL {url} (from {source}) is not an http or https URL',
    hint: 'give a URL such as http://127.0.0.1:8080 with --api, MT_API_URL or `mt login --api`',
  },
  'api:cli:login-file-invalid': {
    status: 400,
    message: 'the login file {file} is not valid: {reason}',
    hint: 'run `mt login` again to rewrite it',
  },
  'api:cli:value-missing': {
    status: 400,
    message: 'no {what} given',
    hint: '{hint}',
  },
  'api:cli:not-a-config-repo': {
    status: 400,
    message: '{dir} is not a config repo: {reason}',
    hint: 'give the folder that holds connectors/, external-operations/, agents/ or interactions/ (`.` when it is the current one)',
  },
  'api:cli:data-not-found': {
    status: 404,
    message: 'no embedded database in {dir} (no {dir}/pglite folder), and DATABASE_URL is not set',
    hint: 'give the data folder of `mt serve --data DIR` with --data DIR, or set DATABASE_URL for PostgreSQL',
  },
  'api:cli:date-invalid': {
    status: 400,
    message: '{flag} {value} is not a date: give YYYY-MM-DD or an ISO 8601 time such as 2026-11-01T00:00:00Z',
    hint: 'dates without a time are midnight UTC',
  },
  'api:cli:config-invalid': {
    status: 422,
    message: 'the config repo has {count} error(s); nothing was sent',
    hint: 'fix them (`mt check` shows the same list) and deploy again',
  },
  'api:cli:tool-not-found': {
    status: 404,
    message: 'the config repo {dir} has no tool {tool}',
    hint: '`mt check --tools {dir}` lists the tools of the repo',
  },
  'api:cli:mcp-tool-missing': {
    status: 404,
    message: 'the MCP server of connector {connector} at {url} has no tool {tool}{suggestion}; it has: {known}',
  },
  'api:cli:call-options-invalid': {
    status: 400,
    message: 'mt extop-call: {reason}',
  },
  'api:cli:arguments-invalid': {
    status: 400,
    message: 'mt approval-approve: {reason}',
    hint: "Give --arguments a JSON object shaped as the approval's argumentsJson, and --hash its requestHash",
  },
  'api:cli:worker-needs-database': {
    status: 400,
    message: 'mt worker needs DATABASE_URL: a worker alone runs against PostgreSQL',
    hint: 'set DATABASE_URL and MT_SECRET_KEY as for `mt serve`; with the embedded database, `mt serve` runs the worker itself',
  },
  'api:cli:file-system-not-found': {
    status: 404,
    message: 'no file system named or with id {fileSystem} in this namespace',
    hint: '`mt fs-ls` shows the file systems; `mt fs-create NAME` makes one',
  },
  'api:cli:secret-not-found': {
    status: 404,
    message: 'no secret named or with id {secret} in this namespace',
    hint: '`mt secret-list` shows the secrets',
  },
  'api:cli:kb-not-found': {
    status: 404,
    message: 'no knowledge base named or with id {kb} in this namespace',
    hint: '`mt kb-list` shows the knowledge bases; `mt kb-create NAME` makes one',
  },
  'api:cli:kb-file-type': {
    status: 400,
    message: '{file} is not a file a knowledge base reads (.md, .markdown, .txt, .text, .html, .htm, .pdf)',
    hint: 'Convert it to one of these, or rename a text file to .txt',
  },
  'api:import:source-unreadable': {
    status: 400,
    message: 'cannot read the OpenAPI document {source}: {reason}',
    hint: 'give a readable file or an http(s) URL',
  },
  'api:import:source-too-large': {
    status: 413,
    message: 'the OpenAPI document at {source} is larger than {limit}',
    hint: 'download it and import the file, or import a smaller document',
  },
  'api:import:source-timeout': {
    status: 504,
    message: 'the OpenAPI document at {source} did not arrive within {seconds} seconds',
    hint: 'download it and import the file',
  },
  'api:import:too-many-redirects': {
    status: 400,
    message: '{source} redirected more than {limit} times',
    hint: 'import the URL it ends at',
  },
  'api:import:document-invalid': {
    status: 400,
    message: '{source} is not a valid OpenAPI document: {errors}',
    hint: 'each problem is given at its JSON pointer in the document; fix them, or check the document with a validator',
  },
  'api:import:swagger-2': {
    status: 400,
    message: '{source} is a Swagger 2.0 document; mt import openapi reads OpenAPI 3.0, 3.1 and 3.2',
    hint: 'convert it to OpenAPI 3.x first (for example with swagger2openapi or the Swagger Editor)',
  },
  'api:import:ref-external': {
    status: 400,
    message:
      '{source} has a $ref to another host ({ref}) at {pointer}; only references to its own file system or host (scheme, host and port) are followed',
    hint: 'bundle the document into one file first (for example with `npx @redocly/cli bundle`), or download the referenced document next to it and refer to it by a relative path',
  },
  'api:import:ref-outside': {
    status: 400,
    message: '{source} has a $ref outside what it may read ({ref}) at {pointer}: {reason}; nothing was written',
    hint: "a $ref reads only files in the document's own folder (or below it), or from a URL's own origin with no redirect off it; copy the referenced document next to it",
  },
  'api:import:ref-unreadable': {
    status: 400,
    message: 'cannot read {ref}, referred to at {pointer} of {source}: {reason}',
    hint: 'a relative $ref is resolved against the file or URL of the document it is written in',
  },
  'api:import:schema-too-large': {
    status: 400,
    message: 'the {where} schema of {source} is too large to import: {reason}; nothing was written',
    hint: 'import fewer operations (--operations, --tags), or simplify the schema; each schema is written once, so this is a schema that is itself this large',
  },
  'api:import:server-relative': {
    status: 400,
    message: 'the server URL {url} of {source} is relative, and there is nothing to resolve it against',
    hint: "give the API's base URL with --server-url, such as --server-url https://api.example.com/v1",
  },
  'api:import:server-missing': {
    status: 400,
    message: '{source} names no server and no --server-url was given',
    hint: "give the API's base URL with --server-url",
  },
  'api:import:filter-unknown': {
    status: 400,
    message: 'unknown {what} {names}; the document has: {valid}',
    hint: 'the names are case-sensitive, as the document writes them',
  },
  'api:import:name-invalid': {
    status: 400,
    message: 'the name {name} cannot prefix resource names: {reason}',
    hint: 'give --name in lowercase kebab case, such as --name museum',
  },
  'api:import:nothing-to-import': {
    status: 400,
    message: 'no operation of {source} could be imported{reason}',
    hint: 'the warnings above say why each operation was left out',
  },
  'api:import:conflict': {
    status: 409,
    message: '{count} file(s) were edited by hand and changed upstream too: {files}; nothing was written',
    hint: "merge the diff above by hand, or pass --force to take the document's version",
  },
});
