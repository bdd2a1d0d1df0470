/** The operator figures of a capability (`GET /api/figures/{capability}`, admin): read from storage now. */
import type { Transport } from './transport.js';

export async function readFigures<T>(
  transport: Transport,
  capability: 'jobs' | 'counters' | 'schedules',
  signal?: AbortSignal,
): Promise<T> {
  const answer = await transport.json<T>({ method: 'GET', path: `figures/${capability}`, key: 'admin', signal });
  return answer.body;
}
