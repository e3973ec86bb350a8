import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { ordersRepo, type RepoFile } from '@maitento/testkit';

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
 * A small config repo modelled on the example repo at the root (weather, and testkit's orders repo: the support
 * desk with get-order and refund-order that requires approval), with every connector on a local upstream, plus a
 * ticket tool (a POST without approval) and the weather flow on an Anthropic model.
 */
export function runsRepoFiles(options: RunsRepoOptions): RepoFile[] {
  const { origin } = options;
  const forecastPath = options.forecastPath ?? '/v1/forecast';
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
    // The orders connectors, tools and support agent (secret orders-api-key, as in the example repo).
    ...ordersRepo({ origin, model: openai, secret: 'orders-api-key', refundPath: options.refundPath }),
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
      path: 'external-operations/open-api/create-ticket.mtr',
      content: `connector = @ref("tickets-create")
guidance = "Opens a support ticket with a one-line subject."
`,
    },
    { path: 'agents/weather-assistant.mtr', content: weatherAgent(openai) },
    { path: 'agents/weather-assistant-claude.mtr', content: weatherAgent(anthropic) },
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
