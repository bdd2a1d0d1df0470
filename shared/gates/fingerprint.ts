/**
 * A run's action fingerprint: what a second start of the same run id is compared with (gate run ids
 * are caller-chosen, so the action, not the id, says whether it is the same run).
 */
import { createHash } from 'node:crypto';

import type { GateAction } from './actions';

/** JSON with object keys sorted, so equal actions have equal text whatever order their fields came in. */
function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}

/**
 * The action's fingerprint: a second start of a run id must bring the same action, or it is refused
 * (409) — a caller who learns another's run id cannot swap the action that runs.
 */
export function actionFingerprint(action: GateAction): string {
  return createHash('sha256').update(canonicalJson(action)).digest('base64url');
}
