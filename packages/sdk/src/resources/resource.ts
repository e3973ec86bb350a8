import type { Maitento } from '../client.js';

/** Base of every resource namespace: holds the client that sends its requests. */
export abstract class APIResource {
  protected readonly client: Maitento;

  constructor(client: Maitento) {
    this.client = client;
  }
}
