import type { RequestOptions } from '../client.js';
import type { Static } from 'typebox';
import type { DeployPlan } from '../types.js';
import type { DeployBodySchema } from '../wire/requests.js';
import { APIResource } from './resource.js';

/**
 * Parameters of {@link Deploys.create}: the repo's `.mtr` and `.json` files; `dryRun` only computes the plan; `prune`
 * deletes what the namespace holds and the files do not (each a `delete` change; without it they are in `absent`).
 */
export type DeployParams = Static<typeof DeployBodySchema>;

/** `mt.deploy`: deploys a config repo. */
export class Deploys extends APIResource {
  /** Deploys the files (or plans it, with `dryRun`); a repo with errors throws `UnprocessableEntityError`. */
  async create(params: DeployParams, options?: RequestOptions): Promise<DeployPlan> {
    const body = {
      files: params.files,
      ...(params.dryRun === undefined ? {} : { dryRun: params.dryRun }),
      ...(params.prune === undefined ? {} : { prune: params.prune }),
      ...(params.endUser === undefined ? {} : { endUser: params.endUser }),
    };
    return this.client.request({ method: 'POST', path: '/v1/deploy', body }, options);
  }
}
