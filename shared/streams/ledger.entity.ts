/** The ledger entity: applies the writer's reports (see ledger.ts); callers only read its state. */
import type { EntityContext } from 'durable-functions';

import { applyReport, emptyLedger, type LedgerReport, type LedgerState } from './ledger';
import { ledgerOps } from './names';

export function streamLedgerEntity(context: EntityContext<LedgerState>): void {
  if (context.df.operationName !== ledgerOps.report) {
    throw new Error(`Unknown stream ledger operation: ${context.df.operationName ?? '(none)'}`);
  }
  const report = context.df.getInput<LedgerReport>();
  if (report === undefined) throw new Error('report needs an input');
  const state = context.df.getState(() => emptyLedger()) ?? emptyLedger();
  context.df.setState(applyReport(state, report));
}
