import type { Static } from 'typebox';
import type { RequestOptions } from '../client.js';
import { path } from '../core/path.js';
import type { CreateSecretParams, RotateMasterKeyParams, RotateSecretParams, SecretInfo } from '../types.js';
import type { SecretKeyRotationSchema, SecretKeyStatusSchema } from '../wire/access.js';
import { APIResource } from './resource.js';

/**
 * Which master key ids the stored secrets (of every namespace) are under: `currentKeyId` (the one new secrets
 * are wrapped under, `MT_SECRET_KEY`), `secretsByKeyId` (how many secrets each holds) and
 * `unusedPreviousKeyIds` (keys of `MT_SECRET_KEY_PREVIOUS` no secret is under any more: they can be retired).
 */
export type SecretKeyStatus = Static<typeof SecretKeyStatusSchema>;

/**
 * What a master key rotation did (`keyId` every data key is now wrapped under, `rewrapped` data keys, `converted`
 * pre-envelope secrets, `batches` committed) and the `status` after it.
 */
export type SecretKeyRotation = Static<typeof SecretKeyRotationSchema>;

/** `mt.secrets`: values tools send as credentials; the API never returns a value. */
export class Secrets extends APIResource {
  /** Stores a new secret. */
  async create(params: CreateSecretParams, options?: RequestOptions): Promise<SecretInfo> {
    return this.client.request({ method: 'POST', path: '/v1/secrets', body: params }, options);
  }

  /** Every secret of the namespace, by id and name. */
  async list(options?: RequestOptions): Promise<SecretInfo[]> {
    return this.client.request({ method: 'GET', path: '/v1/secrets' }, options);
  }

  /** Replaces the value of the secret with id `id`. */
  async rotate(id: string, params: RotateSecretParams, options?: RequestOptions): Promise<SecretInfo> {
    return this.client.request({ method: 'PUT', path: path`/v1/secrets/${id}`, body: params }, options);
  }

  /** Deletes the secret with id `id`. */
  async delete(id: string, options?: RequestOptions): Promise<void> {
    await this.client.request({ method: 'DELETE', path: path`/v1/secrets/${id}` }, options);
  }

  /** Which master key ids the secrets are under (operator: an admin key of `default`). */
  async keyStatus(options?: RequestOptions): Promise<SecretKeyStatus> {
    return this.client.request({ method: 'GET', path: '/v1/admin/secret-key' }, options);
  }

  /**
   * Re-wraps every secret's data key under the server's current master key, in batches; safe to call again after
   * a failure (operator: an admin key of `default`).
   */
  async rotateMasterKey(params: RotateMasterKeyParams = {}, options?: RequestOptions): Promise<SecretKeyRotation> {
    return this.client.request({ method: 'POST', path: '/v1/admin/secret-key/rotate', body: params }, options);
  }
}
