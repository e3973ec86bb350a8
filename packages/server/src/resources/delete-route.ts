import type { ResourceKind } from '@maitento/lang';
import { NameParamsSchema } from '@maitento/sdk';
import { deleteResource, type NotFoundError } from '@maitento/store';
import { forgetRegisteredClients } from '../calls/registered-client-cleanup.js';
import { auditContext } from '../http/actor.js';
import { operation } from '../openapi/operation.js';
import type { Api } from '../schemas/shared.js';
import type { ServerContext } from '../server/context.js';

/** One kind's `DELETE` route: its path, tag and noun as its other routes name them, and its not-found error. */
export interface DeleteRouteSpec {
  kind: ResourceKind;
  /** `/connectors`, `/extops`, ... */
  path: string;
  tag: string;
  /** The noun of the operation id (`Connector` gives `deleteConnector`). */
  noun: string;
  /** What the documentation calls one of it (`tool`). */
  one: string;
  /** The code of a name that is not there, and the error it makes (in the namespace given). */
  notFound: string;
  notFoundError: (namespace: string) => NotFoundError;
}

/**
 * `DELETE {path}/{name}`: deletes a resource (decision 0295): it is no longer listed nor found, no run starts on it,
 * and its versions are disabled; refused while a run not yet ended pins it (`api:resources:pinned`, naming the run)
 * or while the latest version of another resource pins it (`api:resources:referenced`). Answered once every
 * server's cache has applied it.
 */
export function deleteRoute(app: Api, ctx: ServerContext, spec: DeleteRouteSpec): void {
  const { kind, path, tag, noun, one } = spec;
  app.delete(
    `${path}/:name`,
    {
      config: { role: 'admin' },
      schema: operation({
        operationId: `delete${noun}`,
        tags: [tag],
        summary: `Delete a ${one}: no longer listed, found or started; refused while a run not yet ended pins it`,
        description:
          `Deletes the ${one} named in the path (admin key): from then on it is not listed nor found, and its ` +
          'versions are disabled. Refused with 409 api:resources:pinned, naming the run, while a run not yet ended ' +
          '(running, or waiting for an approval, an authorisation or a person) pins a version of it: delete it ' +
          'once the run ends. Refused with 409 api:resources:referenced while the latest version of another ' +
          'resource pins it. A deploy that holds it again creates it anew, its version numbers going on after the ' +
          'last. Recorded in the audit log as resource.deleted.',
        params: NameParamsSchema,
        response: { 204: { type: 'null' } },
        ok: `The ${one} was deleted`,
        errors: [spec.notFound, 'api:resources:pinned', 'api:resources:referenced'],
      }),
    },
    async (request, reply) => {
      const { namespace } = request.identity;
      await deleteResource(ctx.db, namespace, kind, request.params.name, {
        notFound: spec.notFoundError(namespace),
        audit: auditContext(request),
      });
      // The marker steps the cache epoch: answered once every server's cache has applied it (or reads through).
      await ctx.lease.settle();
      // A client registered for the provider, used by no other, is deleted at its server (RFC 7592; decision 0336).
      if (kind === 'auth-provider') {
        await forgetRegisteredClients(ctx, namespace, [request.params.name], request.log, auditContext(request));
      }
      return reply.code(204).send();
    },
  );
}
