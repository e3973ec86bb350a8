import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/** One file of a config repo. */
export interface RepoFile {
  path: string;
  content: string;
}

/** Choices of {@link runsRepoFiles}. */
export interface RunsRepoOptions {
  /** The upstream every connector calls, `http://127.0.0.1:PORT` (allowed by MT_EGRESS_ALLOW=127.0.0.1). */
  origin: string;
  /** The weather connector's path (a later deploy changes it to prove a run keeps its versions). */
  forecastPath?: string;
  /** The refund connector's path. */
  refundPath?: string;
  /** The OpenAI model of the agents that use it. */
  openaiModel?: string;
  /** The Anthropic model of weather-claude. */
  anthropicModel?: string;
}

/**
 * A small config repo modelled on the example repo at the root (weather, the support desk with
 * get-order and refund-order that requires approval), with every connector on a local upstream,
 * plus a ticket tool (a POST without approval) and the weather flow on an Anthropic model.
 */
export function runsRepoFiles(options: RunsRepoOptions): RepoFile[] {
  const { origin } = options;
  const forecastPath = options.forecastPath ?? '/v1/forecast';
  const refundPath = options.refundPath ?? '/orders/{orderId}/refund';
  const openai = options.openaiModel ?? 'openai:gpt-4o-mini';
  const anthropic = options.anthropicModel ?? 'anthropic:claude-sonnet-4-5';
  const weatherAgent = (model: string) => `model = "${model}"
instructions = "You tell people the current weather of a place. Work out its latitude and longitude, call current-weather, and answer in one or two sentences."
functions = [
  { ref = @ref("current-weather") }
]
`;
  const weatherInteraction = (agent: string) => `agent = {
  name = "Weather"
  agent = @ref("${agent}")
}
task = "What is the weather like now in %%place%%?"
inputs.prompts = [
  { name = "place" description = "A town, a city or an address" required = true }
]
inputs.functions.binding = [
  {
    function = @ref("current-weather")
    agent = @ref("${agent}")
    name = "temperatureUnit"
    target = "temperature_unit"
    type = "query"
    default = "celsius"
    description = "celsius or fahrenheit"
  }
]
`;
  return [
    {
      path: 'connectors/open-api/open-meteo-forecast.mtr',
      content: `method = "GET"
url = "${origin}${forecastPath}"
description = "Current weather for a latitude and longitude"
parameters.query = [
  { name = "latitude" description = "Latitude in decimal degrees" type = "number" },
  { name = "longitude" description = "Longitude in decimal degrees" type = "number" },
  { name = "current" description = "Comma-separated list of current weather variables" },
  { name = "temperature_unit" description = "celsius or fahrenheit" }
]
`,
    },
    {
      path: 'connectors/open-api/orders-get-order.mtr',
      content: `method = "GET"
url = "${origin}/orders/{orderId}"
description = "One order of the shop: its items, amounts, status and delivery address"
auth = "Header"
parameters.path = [
  { name = "orderId" description = "The order's id, for example A-1001" }
]
`,
    },
    {
      path: 'connectors/open-api/orders-refund-order.mtr',
      content: `method = "POST"
url = "${origin}${refundPath}"
description = "Refunds an amount of an order to the customer"
auth = "Header"
parameters.path = [
  { name = "orderId" description = "The order's id, for example A-1001" }
]
schema.request = {
  type = "object"
  properties = {
    amount = { type = "number" description = "The amount to refund" exclusiveMinimum = 0 }
    reason = { type = "string" description = "Why, in words the customer will read" }
  }
  required = ["amount", "reason"]
  additionalProperties = false
}
`,
    },
    {
      path: 'connectors/open-api/tickets-create.mtr',
      content: `method = "POST"
url = "${origin}/tickets"
description = "Opens a support ticket"
schema.request = {
  type = "object"
  properties = {
    subject = { type = "string" description = "One line" }
  }
  required = ["subject"]
  additionalProperties = false
}
`,
    },
    {
      path: 'external-operations/open-api/current-weather.mtr',
      content: `connector = @ref("open-meteo-forecast")
bindings.query:current = "temperature_2m,wind_speed_10m,weather_code"
guidance = "Gets the current temperature, the wind speed and the WMO weather code for a place."
`,
    },
    {
      path: 'external-operations/open-api/get-order.mtr',
      content: `connector = @ref("orders-get-order")
guidance = "Gets one order by its id (such as A-1001). Use it before you answer any question about an order."
auth = {
  header = "X-Api-Key"
  secret = @ref("orders-api-key")
}
`,
    },
    {
      path: 'external-operations/open-api/refund-order.mtr',
      content: `connector = @ref("orders-refund-order")
guidance = "Refunds an amount of an order. Look the order up first and refund no more than was paid."
auth = {
  header = "X-Api-Key"
  secret = @ref("orders-api-key")
}
requiresApproval = true
`,
    },
    {
      path: 'external-operations/open-api/create-ticket.mtr',
      content: `connector = @ref("tickets-create")
guidance = "Opens a support ticket with a one-line subject."
`,
    },
    { path: 'agents/weather-assistant.mtr', content: weatherAgent(openai) },
    { path: 'agents/weather-assistant-claude.mtr', content: weatherAgent(anthropic) },
    {
      path: 'agents/support-agent.mtr',
      content: `model = "${openai}"
instructions = "You are the support desk of an online shop. Look up the customer's order before you answer. Refund only damaged items."
functions = [
  { ref = @ref("get-order") },
  { ref = @ref("refund-order") }
]
`,
    },
    {
      path: 'agents/ticket-agent.mtr',
      content: `model = "${openai}"
instructions = "You open a support ticket for what the customer writes, then say its number."
functions = [
  { ref = @ref("create-ticket") }
]
`,
    },
    { path: 'interactions/one-shot/weather.mtr', content: weatherInteraction('weather-assistant') },
    { path: 'interactions/one-shot/weather-claude.mtr', content: weatherInteraction('weather-assistant-claude') },
    {
      path: 'interactions/one-shot/support-desk.mtr',
      content: `agent = {
  name = "Support"
  agent = @ref("support-agent")
}
task = "A customer writes: %%message%%"
inputs.prompts = [
  { name = "message" description = "What the customer wrote" required = true }
]
`,
    },
    {
      path: 'interactions/one-shot/support-any-shop.mtr',
      content: `agent = {
  name = "Support"
  agent = @ref("support-agent")
}
task = "A customer writes: %%message%%"
inputs.prompts = [
  { name = "message" description = "What the customer wrote" required = true }
]
inputs.functions.auth = [
  {
    name = "shopKey"
    description = "The id of the secret that holds the shop's API key"
    function = @ref("get-order")
    agent = @ref("support-agent")
    header = "X-Api-Key"
    required = true
  }
]
`,
    },
    {
      path: 'interactions/one-shot/open-ticket.mtr',
      content: `agent = {
  name = "Tickets"
  agent = @ref("ticket-agent")
}
task = "A customer writes: %%message%%"
inputs.prompts = [
  { name = "message" description = "What the customer wrote" required = true }
]
`,
    },
  ];
}

/** Writes `files` into a new temporary folder and returns its path. */
export async function writeRepo(files: RepoFile[]): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'mt-e2e-runs-repo-'));
  for (const f of files) {
    await mkdir(dirname(join(dir, f.path)), { recursive: true });
    await writeFile(join(dir, f.path), f.content);
  }
  return dir;
}
