import { type CompileOptions, compileRepo, type RepoFile } from '@maitento/lang';
import { deploy, secretNames } from '@maitento/store';
import type { FastifyInstance } from 'fastify';
import { serverErrors } from '../errors.js';
import type { ServerContext } from '../internal/context.js';
import { listRemoteTools } from '../internal/remote-tools.js';
import { bindAnswer, sendBound } from '../plugins/idempotency.js';
import { operation, responses } from '../schemas/shared.js';

/** `POST /v1/deploy`: compile the repo's files and deploy them (or plan it, with `dryRun`). */
export async function deployRoutes(app: FastifyInstance, ctx: ServerContext): Promise<void> {
  // The body's type is the SDK's DeployParams: schemas/same-types.ts proves RepoFile the SDK's DeployFile.
  app.post<{ Body: { files: RepoFile[]; dryRun?: boolean } }>(
    '/deploy',
    {
      config: { role: 'admin' },
      schema: {
        ...operation('deploy'),
        tags: ['deploy'],
        summary: 'Compile and deploy a config repo; a new version only of what changed',
        response: responses({ 200: { $ref: 'DeployPlan#' } }),
      },
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
