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
  'api:cli:repo-not-found': {
    status: 404,
    message: 'no config repo at {dir}',
    hint: 'run it in the repo, or give its folder: `mt deploy path/to/repo`',
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
});
