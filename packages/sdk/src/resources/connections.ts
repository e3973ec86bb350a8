import type { RequestOptions } from '../client.js';
import { path } from '../core/path.js';
import type { Connection, ConnectLink, CreateConnectLinkParams, ListConnectionsParams } from '../wire/connections.js';
import { APIResource } from './resource.js';

/** `mt.connections`: end users' OAuth 2 connections at auth providers, and the links that make them (never a token). */
export class Connections extends APIResource {
  /**
   * Makes a connect link for an end user: the provider's authorization URL to hand them, usable once before
   * `expiresAt`. When they come back, the server stores the connection.
   */
  async createLink(params: CreateConnectLinkParams, options?: RequestOptions): Promise<ConnectLink> {
    return this.client.request({ method: 'POST', path: '/v1/connections/links', body: params }, options);
  }

  /** The connections of the namespace, optionally of one provider and/or one end user. */
  async list(params: ListConnectionsParams = {}, options?: RequestOptions): Promise<Connection[]> {
    const query = new URLSearchParams();
    for (const [key, value] of Object.entries(params)) if (value !== undefined) query.set(key, String(value));
    const text = query.toString();
    return this.client.request({ method: 'GET', path: `/v1/connections${text ? `?${text}` : ''}` }, options);
  }

  /** One connection by id. */
  async get(id: string, options?: RequestOptions): Promise<Connection> {
    return this.client.request({ method: 'GET', path: path`/v1/connections/${id}` }, options);
  }

  /** Deletes a connection and its tokens; it answers the connection deleted. */
  async delete(id: string, options?: RequestOptions): Promise<Connection> {
    return this.client.request({ method: 'DELETE', path: path`/v1/connections/${id}` }, options);
  }
}
