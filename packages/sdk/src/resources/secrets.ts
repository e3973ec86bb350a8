import type { RequestOptions } from '../client.js';
import { path } from '../core/path.js';
import type { CreateSecretParams, RotateMasterKeyParams, RotateSecretParams, SecretInfo } from '../types.js';
import { APIResource } from './resource.js';

/** Which master key ids the stored secrets (of every namespace) are under. */
export interface SecretKeyStatus {
  /** The id of the master key new secrets are wrapped under (`MT_SECRET_KEY`). */
  currentKeyId: string;
  /** How many secrets each master key id holds. */
  secretsByKeyId: Record<string, number>;
  /** Keys of `MT_SECRET_KEY_PREVIOUS` no secret is under any more: they can be retired. */
  unusedPreviousKeyIds: string[];
}

/** What a master key rotation did, and the status after it. */
export interface SecretKeyRotation {
  /** The master key every data key is now wrapped under. */
  keyId: string;
  /** Data keys re-wrapped by this call (values untouched). */
  rewrapped: number;
  /** Secrets stored before envelope encryption, converted by this call. */
  converted: number;
  /** Batches committed. */
  batches: number;
  status: SecretKeyStatus;
}

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
