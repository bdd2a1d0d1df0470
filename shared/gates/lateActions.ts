/**
 * Late joiners' actions: a run registered after its gate's release proceeds at once, and its action
 * is performed by an orchestration of its own, started before the run is committed.
 */
import { createHash } from 'node:crypto';

import type { DurableClient } from '../durable/client';
import { startSingleton } from '../durable/singleton';
import type { LateActionsInput } from './messages';
import { gateFunctions, gateInstanceIds } from './names';

/**
 * What the registrar calls before it commits late joiners with an action, on the Durable client of
 * the request that registers them: the orchestration that performs their actions, one per set of
 * runs (a registration that retries starts the same one again).
 */
export async function startLateActions(durable: DurableClient, gate: string, generation: number, runIds: readonly string[]): Promise<void> {
  const input: LateActionsInput = { gate, generation, runIds };
  const batch = createHash('sha256')
    .update([...runIds].sort().join('\n'))
    .digest('base64url')
    .slice(0, 22);
  await startSingleton(durable, gateFunctions.lateActions, gateInstanceIds.late(gate, generation, batch), input);
}
