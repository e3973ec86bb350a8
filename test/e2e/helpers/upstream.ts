import type { ServerResponse } from 'node:http';
import { startRecordingUpstream, type Upstream, type UpstreamHandler, type UpstreamRequest } from '@maitento/testkit';

export type { Upstream, UpstreamHandler, UpstreamRequest };

/** The default answers: weather, an order, a refund, a ticket. */
export function defaultUpstreamAnswer(request: UpstreamRequest, res: ServerResponse): void {
  const path = request.url.split('?')[0];
  let body: unknown = { ok: true };
  if (path.endsWith('/forecast')) body = { current: { temperature_2m: 21.5, wind_speed_10m: 9.4, weather_code: 1 } };
  else if (/^\/orders\/[^/]+$/.test(path))
    body = { id: path.split('/')[2], status: 'delivered', paid: 40, damaged: true };
  else if (/^\/orders\/[^/]+\/refund$/.test(path)) body = { refund: 'R-77', status: 'refunded' };
  else if (path === '/tickets') body = { ticket: 'T-9', status: 'open' };
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify(body));
}

/** Starts a recording upstream on 127.0.0.1 (`startRecordingUpstream` of `@maitento/testkit`) with these answers. */
export function startUpstream(handler: UpstreamHandler = defaultUpstreamAnswer): Promise<Upstream> {
  return startRecordingUpstream(handler);
}
