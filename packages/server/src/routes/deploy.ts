import { type CompiledRepo, type CompileOptions, compileRepo, type Diagnostic } from '@maitento/lang';
import { DeployBodySchema } from '@maitento/sdk';
import { deploy, secretNames } from '@maitento/store';
import { listRemoteTools } from '../calls/remote-tools.js';
import { serverErrors } from '../errors.js';
import { auditContext } from '../http/actor.js';
import { operation } from '../openapi/operation.js';
import type { Api } from '../schemas/shared.js';
import type { ServerContext } from '../server/context.js';
import { bindAnswer, sendBound } from '../plugins/idempotency.js';
import { forgetRegisteredClients } from '../calls/registered-client-cleanup.js';

/**
 * A warning for each agent whose model names a provider this server has no key for: deployed all the same (the key
 * may be set before a run needs it), where a run would fail with `api:models:not-configured`.
 */
function modelWarnings(
  ctx: ServerContext,
  compiled: CompiledRepo,
  files: ReadonlyArray<{ path: string; content: string }>,
): Diagnostic[] {
  const missingOf = ctx.modelSettingMissing;
  if (missingOf === undefined) return [];
  const warnings: Diagnostic[] = [];
  for (const agent of compiled.agents) {
    const missing = missingOf(agent.model);
    if (missing === undefined) continue;
    const file = compiled.sources.find((s) => s.kind === 'agent' && s.name === agent.name)?.file ?? '';
    // The `model` line of the agent's file, for the position (the first line when it is not found).
    const lines = (files.find((f) => f.path === file)?.content ?? '').split('\n');
    const at = lines.findIndex((line) => /^\s*model\s*=/.test(line));
    const error = serverErrors.create('api:deploy:model-not-configured', {
      agent: agent.name,
      model: agent.model,
      missing,
    });
    warnings.push({
      code: error.code,
      severity: 'warning',
      message: error.message,
      file,
      line: at < 0 ? 1 : at + 1,
      column: at < 0 ? 1 : lines[at].indexOf('model') + 1,
      ...(error.hint === undefined ? {} : { hint: error.hint }),
    });
  }
  return warnings;
}

/** `POST /v1/deploy`: compile the repo's files and deploy them (or plan it, with `dryRun`). */
export async function deployRoutes(app: Api, ctx: ServerContext): Promise<void> {
  app.post(
    '/deploy',
    {
      config: { role: 'admin' },
      schema: operation({
        operationId: 'deploy',
        tags: ['deploy'],
        summary: 'Compile and deploy a config repo; a new version only of what changed',
        description:
          'Compiles the config repo sent as files (path and text) and, when it has no error, stores a new version of ' +
          'each connector, tool, agent and interaction that changed, in one transaction. With dryRun the plan is ' +
          'answered and nothing is stored. A repo with errors answers 422 api:deploy:invalid with every diagnostic ' +
          '(a secret the namespace lacks, a blocked connector address, a syntax error: each its own code). What it ' +
          "does not refuse but a run may trip on comes back in warnings: the compiler's warnings, and an agent whose " +
          'model names a provider this server has no key for (api:deploy:model-not-configured: deployed all the same, ' +
          'since the key may be set later). The resources of the namespace the repo does not hold are left as they ' +
          'are and listed in absent; with prune they are deleted in the same transaction (each a delete change: no ' +
          'longer listed, found or started, their versions disabled but those that runs not yet ended pin, listed ' +
          'in pinnedBy, which stay until the runs end). A deploy that fails deletes nothing.',
        body: DeployBodySchema,
        response: { 200: { $ref: 'DeployPlan#' } },
        ok: 'The plan: what each resource became (created, updated, unchanged) and whether it was applied',
        errors: [
          'api:deploy:invalid',
          'api:deploy:reference-missing',
          'api:deploy:unstorable-text',
          'api:deploy:mcp-tool-missing',
          'api:deploy:mcp-unlisted',
          'api:deploy:mcp-not-connected',
        ],
        examples: {
          body: {
            files: [
              {
                path: 'connectors/open-api/orders-get.mtr',
                content:
                  'method = "GET"\nurl = "https://orders.example.com/orders/{orderId}"\ndescription = "One order by its id"\n' +
                  'auth = "Header"\nparameters.path = [ { name = "orderId" description = "The order id" type = "string" } ]\n',
              },
              {
                path: 'external-operations/open-api/get-order.mtr',
                content:
                  'connector = @ref("orders-get")\nguidance = "Looks up an order by its id."\n' +
                  'auth = { header = "X-Api-Key" secret = @ref("orders-key") }\n',
              },
            ],
            dryRun: false,
          },
        },
      }),
    },
    async (request, reply) => {
      const namespace = request.identity.namespace;
      // Two entries for one path would leave it to chance which one is deployed.
      const paths = new Set<string>();
      for (const file of request.body.files) {
        if (paths.has(file.path)) {
          throw serverErrors.create('api:request:invalid', { detail: `body/files holds ${file.path} twice` });
        }
        paths.add(file.path);
      }
      const options: CompileOptions = {
        egress: ctx.egress,
        knownSecrets: await secretNames(ctx.db, namespace),
        platformOrigin: ctx.platformOrigin,
      };
      let compiled = compileRepo(request.body.files, options);
      const listingWarnings: Diagnostic[] = [];
      // MCP connectors take their input schema from their server: list them, then compile again with it.
      if (compiled.ok && compiled.connectors.some((c) => c.mcp !== undefined)) {
        const listed = await listRemoteTools(ctx, namespace, compiled, request.body.endUser);
        listingWarnings.push(...listed.warnings);
        compiled = compileRepo(request.body.files, { ...options, remoteTools: listed.tools });
      }
      if (!compiled.ok) {
        const count = compiled.diagnostics.filter((d) => d.severity === 'error').length;
        throw serverErrors.create('api:deploy:invalid', { count }, { details: { diagnostics: compiled.diagnostics } });
      }
      const warnings = [
        ...compiled.diagnostics.filter((d) => d.severity === 'warning'),
        ...modelWarnings(ctx, compiled, request.body.files),
        ...listingWarnings,
      ];
      let body = '';
      const plan = await deploy(ctx.db, namespace, compiled, {
        dryRun: request.body.dryRun ?? false,
        prune: request.body.prune ?? false,
        audit: auditContext(request),
        // The answer commits with the request's Idempotency-Key (decision 0102).
        onPlanned: async (tx, planned) => {
          body = await bindAnswer(tx, reply, 200, warnings.length > 0 ? { ...planned, warnings } : planned);
        },
      });
      // A deploy steps the cache epoch: answered once every server's cache has applied it (or reads through).
      if (plan.applied) await ctx.lease.settle();
      // Pruned auth providers: a registered client no provider uses any more is deleted at its server (decision 0336).
      if (plan.applied) {
        const pruned = plan.changes
          .filter((c) => c.kind === 'auth-provider' && c.action === 'delete')
          .map((c) => c.name);
        await forgetRegisteredClients(ctx, namespace, pruned, request.log, auditContext(request));
      }
      return sendBound(reply, body);
    },
  );
}
