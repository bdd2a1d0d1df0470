/**
 * Every check that can refuse a submission — the processor, TALLYHO_JOBS_MAX_ITEMS, unique ids, the
 * depth an envelope can carry, TALLYHO_JOBS_MAX_ITEM_BYTES, a declared processor's item schema —
 * with no write: other capabilities that submit jobs later (a gated run's `job` action, a schedule's
 * job target) run it when they accept the request, so a job they cannot submit is refused up front.
 */
import { AppError, validationError } from '../../errors';
import { jsonDeeperThan } from '../../jsonDepth';
import { buildInput, type InputFile } from '../envelopes/input';
import { maxItemDepth } from '../envelopes/seal';
import { inAppRoute, type JobRoute } from '../ledger/jobRecord';
import type { ItemSchemas } from '../processors/itemSchema';
import type { ProcessorRegistry } from '../processors/processor';
import { processorNamePattern, processorQueueName } from '../processors/processorDefinition';
import type { ProcessorStore } from '../processors/processorStore';
import type { JobSettings } from '../settings';

export interface SubmitRequest {
  readonly processor: string;
  readonly items: readonly { readonly id: string }[];
}

/** Where a checked submission's envelopes go and how they are cut. */
export interface Checked {
  readonly input: InputFile;
  readonly route: JobRoute;
  readonly batchSize: number;
}

export interface CheckDeps {
  readonly inApp: ProcessorRegistry;
  readonly declared: ProcessorStore;
  readonly itemSchemas: ItemSchemas;
  readonly settings: Pick<JobSettings, 'queuePrefix' | 'envelopeMaxItems' | 'maxItems' | 'maxItemBytes'>;
}

/** The processor's route, batch size and item schema; 400 for a processor the app neither has nor was declared. */
async function routeOf(
  deps: CheckDeps,
  request: SubmitRequest,
): Promise<{ route: JobRoute; batchSize: number; schema: Record<string, unknown> | null }> {
  const { settings, inApp } = deps;
  if (inApp.has(request.processor)) return { route: inAppRoute, batchSize: settings.envelopeMaxItems, schema: null };
  const declared = processorNamePattern.test(request.processor) ? await deps.declared.get(request.processor) : undefined;
  if (declared === undefined) {
    throw validationError('Unknown processor', [
      {
        path: 'body.processor',
        message: `Use one of the app's (${[...inApp.keys()].join(', ')}) or a declared processor (PUT /api/processors/{name})`,
      },
    ]);
  }
  const route: JobRoute = { kind: 'declared', queue: processorQueueName(settings.queuePrefix, declared.name) };
  return { route, batchSize: declared.batchSize, schema: declared.itemSchema };
}

function checkIds(request: SubmitRequest): void {
  const seen = new Map<string, number>();
  const duplicates = request.items.flatMap((item, i) => {
    const first = seen.get(item.id);
    if (first === undefined) seen.set(item.id, i);
    return first === undefined ? [] : [{ path: `body.items.${i}.id`, message: `"${item.id}" is also the id of items.${first}` }];
  });
  if (duplicates.length > 0) throw validationError('Item ids must be unique within a job', duplicates.slice(0, 20));
}

function checkSizes(input: InputFile, maxItemBytes: number): void {
  // The envelope wraps each item a few levels deeper; an item that fits the request but not the
  // envelope would be sealed into a message no reader accepts.
  const deep = input.items.flatMap((item, i) =>
    jsonDeeperThan(item.line, maxItemDepth)
      ? [{ path: `body.items.${i}`, message: `item "${item.id}" nests deeper than ${maxItemDepth} levels` }]
      : [],
  );
  if (deep.length > 0) throw validationError('Items nest too deeply', deep.slice(0, 20));
  const oversize = input.items.flatMap((item, i) =>
    item.bytes > maxItemBytes ? [{ path: `body.items.${i}`, message: `${item.bytes} bytes; at most ${maxItemBytes}` }] : [],
  );
  if (oversize.length > 0) {
    throw new AppError('PayloadTooLarge', `Items larger than TALLYHO_JOBS_MAX_ITEM_BYTES (${maxItemBytes} bytes)`, {
      issues: oversize.slice(0, 20),
    });
  }
}

export async function checkSubmission(deps: CheckDeps, request: SubmitRequest): Promise<Checked> {
  const { settings } = deps;
  const { route, batchSize, schema } = await routeOf(deps, request);
  if (request.items.length > settings.maxItems) {
    throw new AppError(
      'PayloadTooLarge',
      `The job has ${request.items.length} items; at most ${settings.maxItems} are accepted (TALLYHO_JOBS_MAX_ITEMS)`,
    );
  }
  checkIds(request);
  const input = buildInput(request.items);
  checkSizes(input, settings.maxItemBytes);
  if (schema !== null) {
    const issues = deps.itemSchemas.issues(schema, request.items);
    if (issues.length > 0) throw validationError(`Items do not match the item schema of ${request.processor}`, issues);
  }
  return { input, route, batchSize };
}
