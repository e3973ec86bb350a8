import type { RequestOptions } from '../client.js';
import type { DeployFile, DeployPlan } from '../types.js';
import { APIResource } from './resource.js';

/** Parameters of {@link Deploys.create}. */
export interface DeployParams {
  /** The repo's `.mtr` and `.json` files. */
  files: DeployFile[];
  /** Only compute the plan; store nothing. */
  dryRun?: boolean;
}

/** `mt.deploy`: deploys a config repo. */
export class Deploys extends APIResource {
  /** Deploys the files (or plans it, with `dryRun`); a repo with errors throws `UnprocessableEntityError`. */
  async create(params: DeployParams, options?: RequestOptions): Promise<DeployPlan> {
    const body = { files: params.files, ...(params.dryRun === undefined ? {} : { dryRun: params.dryRun }) };
    return this.client.request({ method: 'POST', path: '/v1/deploy', body }, options);
  }
}
