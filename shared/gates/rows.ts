/**
 * How a gate lives in the `gates` table: one partition per gate (PartitionKey = the gate's name),
 * so the gate row, its runs, its releases and its audit records can change together in one entity
 * group transaction. Row keys:
 *   - `gate`                    the gate record (state, generation, counts; every change is an If-Match write);
 *   - `rel-<generation>`        a release (who, when, how; the first generation it let go);
 *   - `audit-<generation>-<n>-<kind>`  the audit record of a create, release or reset;
 *   - `fanout-<generation>`     the lease of the instance fanning that release's actions out (fanOut.ts);
 *   - `run-<s>-<runId>`         a registered run; `s` (0–f) spreads runs over 16 ranges that a release
 *                               fans out in parallel, and is derived from the run id alone.
 * Run ids are resource names (letters, digits, `-`, `_`, `.`), so no run key can take the form of
 * another kind of row. Generations are zero-padded so keys sort by generation.
 */
import { createHash } from 'node:crypto';

import type { TableEntityResult } from '@azure/data-tables';
import * as z from 'zod';

import { AppError } from '../errors';
import { type GateActionResult, gateActionTypes } from './actions';
import {
  type ActionOutcome,
  type GateRecord,
  isoTime,
  type ReleaseRecord,
  releaseHows,
  releaseInfoSchema,
  type RunRecord,
} from './operations';
import { runShards } from './names';
import { gateActionResultSchema } from './schemas';

export const gateRowKey = 'gate';

const pad = (generation: number): string => String(generation).padStart(10, '0');

export const rowKeys = {
  gate: gateRowKey,
  release: (generation: number): string => `rel-${pad(generation)}`,
  /** Every release row sorts between these two. */
  releaseRange: ['rel-', 'rel.'] as const,
  audit: (generation: number, kind: 'create' | 'release' | 'reset'): string =>
    `audit-${pad(generation)}-${kind === 'release' ? 2 : 1}-${kind}`,
  auditRange: ['audit-', 'audit.'] as const,
  fanOut: (generation: number): string => `fanout-${pad(generation)}`,
  run: (runId: string): string => `run-${runShard(runId).toString(16)}-${runId}`,
  /** The key range of runs in shards `from` (inclusive) to `to` (exclusive). */
  runRange: (from: number, to: number): readonly [string, string] => [
    `run-${from.toString(16)}-`,
    to >= runShards ? 'run.' : `run-${to.toString(16)}-`,
  ],
} as const;

function runShard(runId: string): number {
  return (createHash('sha256').update(runId).digest()[0] ?? 0) % runShards;
}

/** OData string literal. */
export function odata(value: string): string {
  return `'${value.replace(/'/g, "''")}'`;
}

function corrupt(what: string, issue: string): AppError {
  return new AppError('CorruptState', `The stored ${what} cannot be read: ${issue}`);
}

const jsonText = <T extends z.ZodType>(schema: T) =>
  z.string().transform((text, ctx) => {
    try {
      const parsed = schema.safeParse(JSON.parse(text));
      if (parsed.success) return parsed.data;
      ctx.addIssue({ code: 'custom', message: parsed.error.message });
    } catch {
      ctx.addIssue({ code: 'custom', message: 'not JSON' });
    }
    return z.NEVER;
  });

const gateRow = z.object({
  version: z.literal(2),
  name: z.string(),
  generation: z.int().min(1),
  state: z.enum(['closed', 'released']),
  createdAt: isoTime,
  generationStartedAt: isoTime,
  releaseAt: isoTime.optional(),
  release: jsonText(releaseInfoSchema).optional(),
  openSince: z.int().min(1),
  waiting: z.int().min(0),
  registered: z.int().min(0),
  late: z.int().min(0),
  actionsWaiting: z.int().min(0),
});

export type GateEntity = { partitionKey: string; rowKey: string } & Record<string, string | number | boolean>;

export function gateEntity(record: GateRecord): GateEntity {
  return {
    partitionKey: record.name,
    rowKey: gateRowKey,
    version: record.version,
    name: record.name,
    generation: record.generation,
    state: record.state,
    createdAt: record.createdAt,
    generationStartedAt: record.generationStartedAt,
    // An absent property, not an empty one: a Merge would keep the old value, so gate rows are always replaced.
    ...(record.releaseAt === null ? {} : { releaseAt: record.releaseAt }),
    ...(record.release === null ? {} : { release: JSON.stringify(record.release) }),
    openSince: record.openSince,
    waiting: record.counts.waiting,
    registered: record.counts.registered,
    late: record.counts.late,
    actionsWaiting: record.counts.actionsWaiting,
  };
}

export function gateRecordOf(row: TableEntityResult<Record<string, unknown>>): GateRecord {
  const parsed = gateRow.safeParse(row);
  if (!parsed.success) throw corrupt(`state of gate "${row.partitionKey ?? ''}"`, parsed.error.message);
  const r = parsed.data;
  return {
    version: 2,
    name: r.name,
    generation: r.generation,
    state: r.state,
    createdAt: r.createdAt,
    generationStartedAt: r.generationStartedAt,
    releaseAt: r.releaseAt ?? null,
    release: r.release ?? null,
    openSince: r.openSince,
    counts: { waiting: r.waiting, registered: r.registered, late: r.late, actionsWaiting: r.actionsWaiting },
  };
}

const releaseRow = z.object({
  generation: z.int().min(1),
  at: isoTime,
  by: z.string(),
  how: z.enum(releaseHows),
  note: z.string().optional(),
  from: z.int().min(1),
  actions: z.int().min(0),
});

export function releaseEntity(gate: string, release: ReleaseRecord): GateEntity {
  return {
    partitionKey: gate,
    rowKey: rowKeys.release(release.generation),
    generation: release.generation,
    at: release.at,
    by: release.by,
    how: release.how,
    ...(release.note === undefined ? {} : { note: release.note }),
    from: release.from,
    actions: release.actions,
  };
}

export function releaseRecordOf(row: TableEntityResult<Record<string, unknown>>): ReleaseRecord {
  const parsed = releaseRow.safeParse(row);
  if (!parsed.success) throw corrupt(`release ${row.rowKey ?? ''} of gate "${row.partitionKey ?? ''}"`, parsed.error.message);
  const { note, ...rest } = parsed.data;
  return { ...rest, ...(note === undefined ? {} : { note }) };
}

/**
 * The releasing instance's lease on its fan-out: `running` until `until` unless renewed, then
 * `ended` — `clean` when every action it read was performed and recorded, none left to retry.
 */
export type FanOutLease =
  { readonly state: 'running'; readonly until: string } | { readonly state: 'ended'; readonly at: string; readonly clean: boolean };

const fanOutRow = z.discriminatedUnion('state', [
  z.object({ state: z.literal('running'), until: isoTime }),
  z.object({ state: z.literal('ended'), at: isoTime, clean: z.boolean() }),
]);

export function fanOutEntity(gate: string, generation: number, lease: FanOutLease): GateEntity {
  return { partitionKey: gate, rowKey: rowKeys.fanOut(generation), ...lease };
}

export function fanOutLeaseOf(row: TableEntityResult<Record<string, unknown>>): FanOutLease {
  const parsed = fanOutRow.safeParse(row);
  if (!parsed.success) throw corrupt(`fan-out ${row.rowKey ?? ''} of gate "${row.partitionKey ?? ''}"`, parsed.error.message);
  return parsed.data;
}

/** Table string properties hold at most 32 Ki UTF-16 units; longer action JSON is split over `action`, `action1` …. */
const chunkChars = 30_000;

function chunked(name: string, text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0, n = 0; i < text.length || n === 0; i += chunkChars, n++)
    out[n === 0 ? name : `${name}${n}`] = text.slice(i, i + chunkChars);
  return out;
}

function unchunked(row: Record<string, unknown>, name: string): string | undefined {
  const first = row[name];
  if (typeof first !== 'string') return undefined;
  let text = first;
  for (let n = 1; typeof row[`${name}${n}`] === 'string'; n++) text += row[`${name}${n}`] as string;
  return text;
}

/** `actionState` of a run row, what a release's fan-out filters on: `none`, `pending`, then `done` or `failed`. */
const actionStates = ['none', 'pending', 'done', 'failed'] as const;

/** A run about to be registered: its record before any outcome, with the action itself. */
export interface NewRun extends Omit<RunRecord, 'outcome'> {
  /** The action as JSON (performed once the run is let go). */
  readonly actionJson: string;
}

export function runEntity(run: NewRun): GateEntity {
  const pending = run.actionType !== 'none';
  return {
    partitionKey: run.gate,
    rowKey: rowKeys.run(run.runId),
    runId: run.runId,
    generation: run.generation,
    late: run.late,
    registeredAt: run.registeredAt,
    fingerprint: run.fingerprint,
    actionType: run.actionType,
    ...(run.owner === undefined ? {} : { owner: run.owner }),
    actionState: pending ? 'pending' : 'none',
    ...(pending ? chunked('action', run.actionJson) : {}),
  };
}

/** The properties that record an action's outcome (a Merge onto the run row). */
export function outcomeProperties(outcome: ActionOutcome): Record<string, string> {
  return outcome.state === 'done'
    ? { actionState: 'done', actionAt: outcome.at, actionResult: JSON.stringify(outcome.result) }
    : { actionState: 'failed', actionAt: outcome.at, failureCode: outcome.code, failureReason: outcome.reason };
}

const runRow = z.object({
  runId: z.string(),
  generation: z.int().min(1),
  late: z.boolean(),
  registeredAt: isoTime,
  fingerprint: z.string(),
  actionType: z.enum(gateActionTypes),
  owner: z.string().optional(),
  actionState: z.enum(actionStates),
  actionAt: isoTime.optional(),
  actionResult: jsonText(gateActionResultSchema).optional(),
  failureCode: z.string().optional(),
  failureReason: z.string().optional(),
});

function outcomeOf(r: z.output<typeof runRow>): ActionOutcome | undefined {
  const at = r.actionAt ?? r.registeredAt;
  if (r.actionState === 'done') return { state: 'done', at, result: r.actionResult ?? ({ type: r.actionType } as GateActionResult) };
  if (r.actionState === 'failed')
    return { state: 'failed', at, code: r.failureCode ?? 'Internal', reason: r.failureReason ?? 'The action failed' };
  return undefined;
}

export function runRecordOf(row: TableEntityResult<Record<string, unknown>>): RunRecord {
  const parsed = runRow.safeParse(row);
  if (!parsed.success) throw corrupt(`run ${row.rowKey ?? ''} of gate "${row.partitionKey ?? ''}"`, parsed.error.message);
  const r = parsed.data;
  return {
    gate: row.partitionKey ?? '',
    runId: r.runId,
    generation: r.generation,
    late: r.late,
    registeredAt: r.registeredAt,
    fingerprint: r.fingerprint,
    actionType: r.actionType,
    ...(r.owner === undefined ? {} : { owner: r.owner }),
    outcome: outcomeOf(r),
  };
}

/** The action JSON of a run row (present while its action is to be performed). */
export function actionJsonOf(row: Record<string, unknown>): string | undefined {
  return unchunked(row, 'action');
}
