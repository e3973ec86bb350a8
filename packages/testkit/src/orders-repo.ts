/** One file of a config repo: its path in the repo and its `.mtr` text. */
export interface RepoFile {
  path: string;
  content: string;
}

/** What the tests that deploy the orders repo vary. */
export interface OrdersRepoOptions {
  /** The upstream both connectors call, such as `http://127.0.0.1:PORT`. */
  origin: string;
  /** The support agent's model (default `scripted:support`). */
  model?: string;
  /** The name of the secret the tools send as `X-Api-Key` (default `orders-key`). */
  secret?: string;
  /** The refund connector's path (default `/orders/{orderId}/refund`; a later deploy may change it). */
  refundPath?: string;
  /** Whether refund-order requires a person's approval (default true). */
  refundApproval?: boolean;
}

/**
 * The "orders" config repo the engine, server and end-to-end tests deploy: connectors orders-get (GET) and
 * orders-refund (POST) on `origin`, tools get-order and refund-order (which requires approval), support-agent,
 * and the interactions support (a message, an optional tone) and refund (the order id bound to refund-order's
 * path, an optional `verbose` query binding and `shopKey` auth input of get-order).
 */
export function ordersRepo(options: OrdersRepoOptions): RepoFile[] {
  const { origin } = options;
  const model = options.model ?? 'scripted:support';
  const secret = options.secret ?? 'orders-key';
  const refundPath = options.refundPath ?? '/orders/{orderId}/refund';
  return [
    {
      path: 'connectors/open-api/orders-get.mtr',
      content: `method = "GET"
url = "${origin}/orders/{orderId}"
description = "One order by its id"
auth = "Header"
parameters.path = [ { name = "orderId" description = "The order id, for example A-1001" type = "string" } ]
parameters.query = [ { name = "verbose" description = "More detail" type = "boolean" required = false } ]
`,
    },
    {
      path: 'connectors/open-api/orders-refund.mtr',
      content: `method = "POST"
url = "${origin}${refundPath}"
description = "Refunds an amount of an order"
auth = "Header"
parameters.path = [ { name = "orderId" description = "The order id, for example A-1001" type = "string" } ]
schema.request = {
  type = "object"
  properties = {
    amount = { type = "number" description = "The amount to refund" }
    reason = { type = "string" description = "Why, in words the customer will read" }
  }
  required = ["amount", "reason"]
  additionalProperties = false
}
`,
    },
    {
      path: 'external-operations/open-api/get-order.mtr',
      content: `connector = @ref("orders-get")
guidance = "Looks up an order by its id."
auth = { header = "X-Api-Key" secret = @ref("${secret}") }
`,
    },
    {
      path: 'external-operations/open-api/refund-order.mtr',
      content: `connector = @ref("orders-refund")
guidance = "Refunds an order."
auth = { header = "X-Api-Key" secret = @ref("${secret}") }
requiresApproval = ${options.refundApproval ?? true}
`,
    },
    {
      path: 'agents/support-agent.mtr',
      content: `model = "${model}"
instructions = "Help customers with their orders."
functions = [ { ref = @ref("get-order") }, { ref = @ref("refund-order") } ]
`,
    },
    {
      path: 'interactions/one-shot/support.mtr',
      content: `agent = { name = "Support" agent = @ref("support-agent") }
task = "A customer writes: %%message%% (%%tone%%)"
inputs.prompts = [
  { name = "message" description = "What the customer wrote" required = true },
  { name = "tone" description = "How to answer" required = false default = "friendly" },
]
`,
    },
    {
      path: 'interactions/one-shot/refund.mtr',
      content: `agent = { name = "Support" agent = @ref("support-agent") }
task = "Refund order %%orderId%%: %%message%%"
inputs.prompts = [ { name = "message" description = "What the customer wrote" required = true } ]
inputs.functions.binding = [
  { name = "orderId" function = @ref("refund-order") agent = @ref("support-agent") target = "orderId" type = "path" required = true },
  { name = "verbose" function = @ref("get-order") agent = @ref("support-agent") target = "verbose" type = "query" required = false },
]
inputs.functions.auth = [
  { name = "shopKey" function = @ref("get-order") agent = @ref("support-agent") header = "X-Api-Key" required = false },
]
`,
    },
  ];
}

/**
 * The "refund desk" repo the SDK's and the CLI's run tests deploy: tool refund-order (POST
 * `origin/orders/{orderId}/refund`, a person's approval required; its body an `amount` and an optional `note`),
 * agent `desk` played by the scripted model `desk` with interaction `desk` (its task the `message` input), and
 * interaction `broken`, whose agent's script does not exist (its run fails).
 */
export function refundDeskRepo(origin: string): RepoFile[] {
  return [
    {
      path: 'connectors/open-api/orders-refund.mtr',
      content: `method = "POST"
url = "${origin}/orders/{orderId}/refund"
description = "Refunds an order"
parameters.path = [ { name = "orderId" } ]
schema.request = { type = "object" properties = { amount = { type = "number" } note = { type = "string" } } required = ["amount"] }
`,
    },
    {
      path: 'external-operations/open-api/refund-order.mtr',
      content: 'connector = @ref("orders-refund")\nguidance = "Refunds."\nrequiresApproval = true\n',
    },
    {
      path: 'agents/desk.mtr',
      content: 'model = "scripted:desk"\ninstructions = "Help."\nfunctions = [ { ref = @ref("refund-order") } ]\n',
    },
    { path: 'agents/broken.mtr', content: 'model = "scripted:no-such-script"\ninstructions = "Fail."\n' },
    {
      path: 'interactions/one-shot/desk.mtr',
      content: `agent = { name = "Desk" agent = @ref("desk") }
task = "%%message%%"
inputs.prompts = [ { name = "message" required = true } ]
`,
    },
    {
      path: 'interactions/one-shot/broken.mtr',
      content: 'agent = { name = "Broken" agent = @ref("broken") }\ntask = "fail"\n',
    },
  ];
}

/** A turn of the refund desk's script: refund-order of order A-1 with `request` as its body. */
export function refundTurn(request: { amount: number; note?: string }) {
  return {
    toolCalls: [{ name: 'refund-order', arguments: { request, additionalInputs: { 'path.orderId': 'A-1' } } }],
  };
}
