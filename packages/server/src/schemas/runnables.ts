// The JSON Schemas of agents and interactions as the API shows them.

const anyJson = {};

const toolPin = {
  type: 'object',
  properties: { name: { type: 'string' }, version: { type: 'integer' } },
  required: ['name', 'version'],
};

/** Agents and interactions, each added once with its `$id`. */
export const runnableSchemas = [
  {
    $id: 'Agent',
    type: 'object',
    properties: {
      kind: { type: 'string', enum: ['agent'] },
      name: { type: 'string' },
      model: { type: 'string' },
      instructions: { type: 'string' },
      summary: { type: 'string' },
      functions: {
        type: 'array',
        items: { type: 'object', properties: { ref: { type: 'string' } }, required: ['ref'] },
      },
    },
  },
  {
    $id: 'Interaction',
    type: 'object',
    properties: {
      kind: { type: 'string', enum: ['interaction'] },
      name: { type: 'string' },
      agent: { type: 'object', properties: { name: { type: 'string' }, agent: { type: 'string' } } },
      task: { type: 'string' },
      inputs: {
        type: 'object',
        properties: {
          prompts: {
            type: 'array',
            items: {
              type: 'object',
              properties: {
                name: { type: 'string' },
                description: { type: 'string' },
                required: { type: 'boolean' },
                default: { type: 'string' },
              },
            },
          },
          functions: {
            type: 'object',
            properties: {
              binding: {
                type: 'array',
                items: {
                  type: 'object',
                  properties: {
                    name: { type: 'string' },
                    function: { type: 'string' },
                    agent: { type: 'string' },
                    target: { type: 'string' },
                    type: { type: 'string', enum: ['request', 'query', 'path'] },
                    required: { type: 'boolean' },
                    default: anyJson,
                    description: { type: 'string' },
                  },
                },
              },
              auth: {
                type: 'array',
                items: {
                  type: 'object',
                  properties: {
                    name: { type: 'string' },
                    function: { type: 'string' },
                    agent: { type: 'string' },
                    header: { type: 'string' },
                    required: { type: 'boolean' },
                    secret: { type: 'string' },
                    description: { type: 'string' },
                  },
                },
              },
            },
          },
        },
      },
      functions: {
        type: 'object',
        properties: {
          openApi: {
            type: 'array',
            items: { type: 'object', properties: { name: { type: 'string' }, ref: { type: 'string' } } },
          },
        },
      },
    },
  },
  {
    $id: 'InteractionInput',
    type: 'object',
    description:
      'One input a run gives: a prompt (fills %%name%%), a binding (written into a tool call) or an auth input (a secret id)',
    properties: {
      name: { type: 'string' },
      kind: { type: 'string', enum: ['prompt', 'binding', 'auth'] },
      required: { type: 'boolean' },
      description: { type: 'string' },
      default: anyJson,
      function: { type: 'string' },
      agent: { type: 'string' },
      target: { type: 'string' },
      type: { type: 'string', enum: ['request', 'query', 'path'] },
      header: { type: 'string' },
      secret: { type: 'string' },
    },
    required: ['name', 'kind', 'required'],
  },
  {
    $id: 'ToolPin',
    type: 'object',
    properties: toolPin.properties,
    required: toolPin.required,
  },
];
