/**
 * The gate entity: the global flag. One entity per gate name (the key); it serialises register,
 * release, reset and the proceeded reports, so "released or not" has exactly one answer at any time.
 * All decisions are in transitions.ts; this file validates, dispatches and stores.
 */
import type { EntityContext } from 'durable-functions';

import {
  type GateOperationInput,
  type GateOperationName,
  type GateRecord,
  gateRecordSchema,
  isGateOperation,
  operationInputs,
} from './operations';
import { create, proceeded, register, release, reset, type Transition } from './transitions';

function inputOf<N extends GateOperationName>(context: EntityContext<GateRecord>, name: N): GateOperationInput<N> {
  const parsed = operationInputs[name].safeParse(context.df.getInput<unknown>());
  if (!parsed.success) {
    const message = `gate ${context.df.entityKey}: invalid input for "${name}": ${parsed.error.message}`;
    // The library turns a thrown Error into "{}" for the caller, so say it in the log as well.
    context.error(message);
    throw new Error(message);
  }
  return parsed.data as GateOperationInput<N>;
}

function apply(context: EntityContext<GateRecord>, name: GateOperationName, record: GateRecord | undefined): Transition<unknown> {
  switch (name) {
    case 'create':
      return create(record, inputOf(context, name));
    case 'register':
      return register(record, inputOf(context, name));
    case 'release':
      return release(record, inputOf(context, name));
    case 'reset':
      return reset(record, inputOf(context, name));
    case 'proceeded':
      return proceeded(record, inputOf(context, name));
  }
}

export function gateEntity(context: EntityContext<GateRecord>): void {
  const name = context.df.operationName;
  if (!isGateOperation(name)) {
    context.error(`gate ${context.df.entityKey}: unknown operation "${String(name)}"`);
    throw new Error(`Unknown gate operation "${String(name)}"`);
  }
  const stored = context.df.getState();
  const record = stored === undefined || stored === null ? undefined : gateRecordSchema.parse(stored);
  const transition = apply(context, name, record);
  if (transition.record !== undefined && transition.record !== record) context.df.setState(transition.record);
  context.df.return(transition.result);
}
