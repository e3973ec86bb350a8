import { type CompileOptions, compileRepo } from '@maitento/lang';
import { DeployBodySchema } from '@maitento/sdk';
import { deploy, secretNames } from '@maitento/store';
import { listRemoteTools } from '../calls/remote-tools.js';
import { serverErrors } from '../errors.js';
import { auditContext } from '../http/actor.js';
import { operation } from '../openapi/operation.js';
import type { Api } from '../schemas/shared.js';
import type { ServerContext } from '../server/context.js';
import { bindAnswer, sendBound } from '../plugins/idempotency.js';

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
          '(a secret the namespace lacks, a blocked connector address, a syntax error: each its own code).',
        body: DeployBodySchema,
        response: { 200: { $ref: 'DeployPlan#' } },
        ok: 'The plan: what each resource became (created, updated, unchanged) and whether it was applied',
        errors: [
          'api:deploy:invalid',
          'api:deploy:reference-missing',
          'api:deploy:unstorable-text',
          'api:deploy:mcp-tool-missing',
          'api:deploy:mcp-unlisted',
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
      // MCP connectors take their input schema from their server: list them, then compile again with it.
      if (compiled.ok && compiled.connectors.some((c) => c.mcp !== undefined)) {
        const remoteTools = await listRemoteTools(ctx, namespace, compiled);
        compiled = compileRepo(request.body.files, { ...options, remoteTools });
      }
      if (!compiled.ok) {
        const count = compiled.diagnostics.filter((d) => d.severity === 'error').length;
        throw serverErrors.create('api:deploy:invalid', { count }, { details: { diagnostics: compiled.diagnostics } });
      }
      let body = '';
      const plan = await deploy(ctx.db, namespace, compiled, {
        dryRun: request.body.dryRun ?? false,
        audit: auditContext(request),
        // The answer commits with the request's Idempotency-Key (decision 0102).
        onPlanned: async (tx, planned) => {
          body = await bindAnswer(tx, reply, 200, planned);
        },
      });
      // A deploy steps the cache epoch: answered once every server's cache has applied it (or reads through).
      if (plan.applied) await ctx.lease.settle();
      return sendBound(reply, body);
    },
  );
}
