import { defineErrors } from '@maitento/errors';

/** The error registry of `@maitento/lang`: syntax diagnostics first, config diagnostics after. */
export const langErrors = defineErrors({
  // ---- syntax: lexer, parser and formatter diagnostics (packages/lang/src/syntax) ----
  'mtr:syntax:unexpected-token': {
    status: 400,
    message: '{detail}',
  },
  'mtr:syntax:invalid-key': {
    status: 400,
    message: '`{key}` is not a key segment',
    hint: 'write a key segment that is not a name as a quoted string: "a/b" = 1',
  },
  'mtr:syntax:unexpected-character': {
    status: 400,
    message: 'unexpected character {char}',
    hint: 'remove it, or put it inside a double-quoted string',
  },
  'mtr:syntax:unterminated-string': {
    status: 400,
    message: 'unterminated string: a `"` is missing before the end of the line',
    hint: 'close the string with `"` on the same line; write a newline as \\n',
  },
  'mtr:syntax:invalid-escape': {
    status: 400,
    message: 'invalid escape {escape} in a string',
    hint: 'valid escapes are \\" \\\\ \\/ \\b \\f \\n \\r \\t and \\uXXXX',
  },
  'mtr:syntax:too-deep': {
    status: 400,
    message: 'arrays and objects nest deeper than {max} levels',
    hint: 'flatten the value; use @json("file.json") for deeply nested data',
  },
  // ---- config ----
  // Config compiler (packages/lang/src/config): trees, resources, references and checks.
  'mtr:keys:duplicate': {
    status: 422,
    message: '{key} is set twice',
    hint: 'it was first set at line {line}; keep one of them',
  },
  'mtr:keys:conflict': {
    status: 422,
    message: '{key} {detail}',
    hint: 'a key holds either one value or an object of keys, not both',
  },
  'mtr:directive:unknown': {
    status: 422,
    message: 'unknown directive @{name}',
    hint: 'the directives are @ref("name") and @json("file.json"){suggestion}',
  },
  'mtr:directive:arguments': {
    status: 422,
    message: '@{name} takes exactly one string argument',
    hint: 'write @{name}("...")',
  },
  'mtr:json:path': {
    status: 422,
    message: '@json("{path}") {reason}',
    hint: 'name a .json file of the config repo by its path from the repo root, such as schemas/order.json',
  },
  'mtr:json:not-found': {
    status: 422,
    message: '@json("{path}") names no file of the config repo',
    hint: 'the path is relative to the repo root, not to this file',
  },
  'mtr:json:invalid': {
    status: 422,
    message: '{path} is not valid JSON: {detail}',
    hint: 'fix the JSON at this position',
  },
  'mtr:repo:unknown-folder': {
    status: 422,
    message: '{file} is not in a resource folder, so it is not a resource',
    hint: 'put it in connectors/open-api/, connectors/mcp/, external-operations/open-api/, agents/, interactions/one-shot/ or interactions/conversation/',
  },
  'mtr:repo:duplicate-name': {
    status: 422,
    message: 'two {kind}s are named {name}: {first} and {second}',
    hint: 'a resource name is its file name; rename one of the files',
  },
  'mtr:auth:unused': {
    status: 422,
    message:
      'the tool {tool} names a secret, but its connector {connector} has auth = "{auth}", so the secret is never sent',
    hint: 'set auth = "Header" on the connector, or remove the tool\'s auth',
  },
  'mtr:connector:oauth2': {
    status: 422,
    message: '{detail}',
    hint: '{hint}',
  },
  'mtr:repo:name-style': {
    status: 422,
    message: 'the {kind} name {name} is not lowercase kebab-case',
    hint: 'rename the file, for example to {suggestion}.mtr',
  },
  'mtr:property:unknown': {
    status: 422,
    message: '{where} has no property {name}',
    hint: '{suggestion}',
  },
  'mtr:property:required': {
    status: 422,
    message: '{where} needs {name}',
    hint: 'add {name} = ...',
  },
  'mtr:property:type': {
    status: 422,
    message: '{key} must be {expected}, not {actual}',
  },
  'mtr:property:value': {
    status: 422,
    message: '{key} {detail}',
    hint: '{allowed}',
  },
  'mtr:property:too-long': {
    status: 422,
    message: '{key} is {length} characters long; at most {max} are allowed',
    hint: 'shorten it',
  },
  'mtr:agent:model-invalid': {
    status: 422,
    message: 'model is {model}; it must be provider:name, for example "openai:gpt-4o-mini"',
    hint: 'the providers are openai, anthropic, openai-compatible and scripted',
  },
  'mtr:agent:model-unknown': {
    status: 422,
    message: 'model {model} names the provider {provider}, which Maitento cannot run',
    hint: '{suggestion}the providers are openai, anthropic, openai-compatible and scripted',
  },
  'mtr:agent:function-target': {
    status: 422,
    message: 'a function names either a tool (ref) or an agent (agent), one of them',
    hint: 'write { ref = @ref("a-tool") } for a tool, or { agent = @ref("an-agent") } to hand tasks to another agent',
  },
  'mtr:agent:summary-missing': {
    status: 422,
    message: 'the agent {agent} has no summary, which the model is shown to know when to hand it a task',
    hint: 'add summary = "..." to agents/{agent}.mtr: what it does, in one sentence',
  },
  'mtr:agent:cycle': {
    status: 422,
    message: 'agents hand tasks to each other in a cycle: {cycle}',
    hint: 'remove one of these agent functions: an agent may hand a task only to agents that never hand it back',
  },
  'mtr:ref:unknown': {
    status: 422,
    message: '@ref("{name}") names no {kind}',
    hint: '{suggestion}',
  },
  'mtr:ref:wrong-kind': {
    status: 422,
    message: '@ref("{name}") names a {actual}, but {key} needs a {expected}',
    hint: 'refer to a {expected} here',
  },
  'mtr:url:invalid': {
    status: 422,
    message: 'url {detail}',
    hint: 'write a full http:// or https:// URL, with {name} for each path parameter',
  },
  'mtr:url:path-only': {
    status: 422,
    message: 'url {url} is a path without a host, which only a platform tool may name: {why}',
    hint: 'write the full http:// or https:// URL, or set auth = "Maitento" for a call to this platform\'s own API',
  },
  'mtr:schedule:cron': {
    status: 422,
    message: 'cron {detail}',
    hint: 'write 5 fields (minute hour day month weekday) or 6 with seconds first, such as "0 8 * * MON-FRI" or "*/30 * * * * *"',
  },
  'mtr:schedule:timezone': {
    status: 422,
    message: 'timezone {zone} is not an IANA time zone{suggestion}',
    hint: 'write a zone of the IANA database, such as "Europe/Paris", "America/New_York" or "UTC"',
  },
  'mtr:schedule:input-unknown': {
    status: 422,
    message: 'interaction {interaction} has no run input {name}{suggestion}',
    hint: 'its run inputs: {known}',
  },
  'mtr:schedule:input-required': {
    status: 422,
    message: 'inputs gives no {name}, which interaction {interaction} requires ({what})',
    hint: 'add {name} = ... to inputs',
  },
  'mtr:trigger:input-unknown': {
    status: 422,
    message: 'interaction {interaction} has no run input {name}{suggestion}',
    hint: 'its run inputs: {known}',
  },
  'mtr:trigger:input-required': {
    status: 422,
    message: 'inputs maps no {name}, which interaction {interaction} requires ({what})',
    hint: 'add {name} = { pointer = "/..." } (and a default when the payload may lack it)',
  },
  'mtr:trigger:source': {
    status: 422,
    message: 'the trigger {detail}',
    hint: 'give verify = { style = ... secret = @ref("...") } for an inbound webhook, or on = { runCompleted = @ref("<interaction>") } to start a run when another run ends',
  },
  'mtr:trigger:max-body': {
    status: 422,
    message: 'maxBodyBytes is {value}; a body limit is a whole number of bytes from 1 to 1048576',
    hint: 'leave it out for 262144 (256 KiB)',
  },
  'mtr:auth-provider:endpoints': {
    status: 422,
    message: 'an auth provider {detail}',
    hint: 'give issuer = "https://..." (its endpoints are read from its metadata), or authorizationUrl and tokenUrl',
  },
  'mtr:auth-provider:url': {
    status: 422,
    message: '{key} {detail}',
    hint: 'write a full https:// URL (http:// only for a server MT_EGRESS_ALLOW lets through)',
  },
  'mtr:auth-provider:client-secret': {
    status: 422,
    message: '{detail}',
    hint: '{hint}',
  },
  'mtr:path:undeclared': {
    status: 422,
    message: 'the url has the path parameter {{name}}, but parameters.path does not declare {name}',
    hint: 'add { name = "{name}" } to parameters.path',
  },
  'mtr:path:unused': {
    status: 422,
    message: 'the path parameter {name} is declared, but the url has no {{name}}',
    hint: 'put {{name}} in the url or remove the parameter',
  },
  'mtr:header:reserved': {
    status: 422,
    message: 'the header {name} cannot be a parameter: {reason}',
    hint: '{hint}',
  },
  'mtr:binding:unknown-target': {
    status: 422,
    message: 'the binding {target} fills nothing: {detail}',
    hint: '{suggestion}',
  },
  'mtr:binding:conflict': {
    status: 422,
    message: 'the run input {name} is bound to {target} of {tool}, which the tool already fixes',
    hint: 'remove the tool binding {target} or this run-input binding',
  },
  'mtr:binding:duplicate': {
    status: 422,
    message: '{target} of {tool} is filled by two bindings: {first} and {second}',
    hint: 'keep one binding per field',
  },
  'mtr:binding:agent-required': {
    status: 422,
    message: '{tool} comes from the functions of the agent {agent}, so this {what} needs agent = @ref("{agent}")',
    hint: 'add agent = @ref("{agent}"), or hand the tool out with functions.openApi',
  },
  'mtr:binding:function-not-given': {
    status: 422,
    message: 'this {what} is for {tool}, which the interaction does not give to {whom}',
    hint: "add the tool to functions.openApi or to the agent's functions",
  },
  'mtr:placeholder:undeclared': {
    status: 422,
    message: '%%{name}%% is not an input of this interaction',
    hint: '{suggestion}',
  },
  'mtr:schema:invalid': {
    status: 422,
    message: '{key} is not a valid JSON Schema: {detail}',
    hint: 'schemas are checked as JSON Schema draft-07, or 2020-12 when $schema says so (ajv 8 with ajv-formats); a $ref must point inside the schema',
  },
  'mtr:names:duplicate': {
    status: 422,
    message: 'two {what} are named {name}',
    hint: 'names must be unique here; the first is at line {line}',
  },
  'mtr:compiler:crashed': {
    status: 500,
    message: 'the config compiler failed: {detail}',
    hint: 'this is a bug in Maitento; please report it with the file that caused it',
  },
});
