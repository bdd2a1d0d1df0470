/**
 * Declared processors (`PUT /api/processors/{name}`, admin): an external or webhook processor with
 * its batch size, lease, attempts, back-off and item schema. A new name takes a place among
 * TALLYHO_JOBS_MAX_PROCESSORS (a capped set: exact under concurrency); a webhook gets a secret,
 * returned once, and its URL passes the same allow-list and address checks as a webhook schedule
 * target. Changing a declaration applies to envelopes leased or pushed from then on.
 */
import { randomBytes } from 'node:crypto';

import { AppError, validationError } from '../../errors';
import { LostRace } from '../../retry';
import type { Clock } from '../../clock';
import type { Logger } from '../../log';
import type { ItemSchemas } from './itemSchema';
import type { ProcessorRegistry } from './processor';
import type { ProcessorStore } from './processorStore';
import type { PushTransport } from './pushTransport';
import {
  type DeclareBody,
  type DeclaredProcessor,
  maxQueueNameLength,
  processorQueueName,
  type WebhookProcessor,
} from './processorDefinition';

export type { DeclareBody } from './processorDefinition';

/** How long the secret a rotation replaced still signs pushes alongside the new one. */
const secretOverlapMs = 24 * 3600 * 1000;

function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

export interface DeclarationsDeps {
  readonly declared: ProcessorStore;
  /** The names declared so far (TALLYHO_JOBS_MAX_PROCESSORS), a capped set. */
  readonly names: { admit(name: string): Promise<void> };
  /** The in-app processors: their names are taken. */
  readonly inApp: ProcessorRegistry;
  readonly itemSchemas: ItemSchemas;
  /** The webhook guard (a webhook processor's URL passes it or the declaration is refused). */
  readonly push: Pick<PushTransport, 'urlIssue'>;
  /** TALLYHO_JOBS_QUEUE_PREFIX: a processor's queue is named after it. */
  readonly queuePrefix: string;
  readonly clock: Clock;
  readonly logger: Logger;
}

function check(deps: DeclarationsDeps, name: string, body: DeclareBody): void {
  if (deps.inApp.has(name)) {
    throw new AppError('Conflict', `${name} is an in-app processor (registered where the app is composed); choose another name`);
  }
  const queue = processorQueueName(deps.queuePrefix, name);
  const issues: { path: string; message: string }[] = [];
  if (queue.length > maxQueueNameLength) {
    issues.push({ path: 'params.name', message: `Its queue ${queue} would pass ${maxQueueNameLength} characters; use a shorter name` });
  }
  if (body.itemSchema !== null) {
    const problem = deps.itemSchemas.problem(body.itemSchema);
    if (problem !== undefined) issues.push({ path: 'body.itemSchema', message: `Not a usable JSON Schema: ${problem}` });
  }
  if (body.type === 'webhook') {
    const problem = deps.push.urlIssue(body.url);
    if (problem !== undefined) issues.push({ path: 'body.url', message: problem });
  }
  if (issues.length > 0) throw validationError('The processor cannot be declared', issues);
}

export interface Declared {
  readonly processor: DeclaredProcessor;
  readonly created: boolean;
  /** A new webhook processor's secret: shown in this answer only. */
  readonly secret?: string;
}

export class Declarations {
  constructor(private readonly deps: DeclarationsDeps) {}

  /** A declared processor; 404 when there is none of that name. */
  async get(name: string): Promise<DeclaredProcessor> {
    const stored = await this.deps.declared.read(name);
    if (stored === undefined) throw new AppError('NotFound', `No declared processor ${name}`);
    return stored.processor;
  }

  list(): Promise<DeclaredProcessor[]> {
    return this.deps.declared.list();
  }

  async declare(name: string, body: DeclareBody): Promise<Declared> {
    const { deps } = this;
    check(deps, name, body);
    for (let attempt = 0; attempt < 5; attempt++) {
      const existing = await deps.declared.read(name);
      if (existing !== undefined && existing.processor.type !== body.type) {
        throw new AppError('Conflict', `${name} is declared as a ${existing.processor.type} processor; a processor keeps its type`);
      }
      if (existing === undefined) await deps.names.admit(name);
      const now = deps.clock.now();
      const base = {
        name,
        batchSize: body.batchSize,
        maxAttempts: body.maxAttempts,
        retry: body.retry,
        itemSchema: body.itemSchema,
        workers: body.workers,
        idleLimitSeconds: body.idleLimitSeconds,
        createdAt: existing?.processor.createdAt ?? now,
        updatedAt: now,
      };
      let secret: string | undefined;
      let next: DeclaredProcessor;
      if (body.type === 'external') {
        next = { ...base, type: 'external', leaseSeconds: body.leaseSeconds };
      } else {
        const kept = existing?.processor as WebhookProcessor | undefined;
        secret = kept === undefined ? newWebhookSecret() : undefined;
        next = {
          ...base,
          type: 'webhook',
          leaseSeconds: body.timeoutSeconds,
          url: body.url,
          timeoutSeconds: body.timeoutSeconds,
          concurrency: body.concurrency,
          secret: kept?.secret ?? (secret as string),
          previousSecret: kept?.previousSecret ?? null,
          previousSecretUntil: kept?.previousSecretUntil ?? null,
        };
      }
      try {
        await deps.declared.write(next, existing?.etag);
        deps.logger.log('info', 'jobs.processor_declared', { processor: name, type: next.type, created: existing === undefined });
        return { processor: next, created: existing === undefined, ...(secret === undefined ? {} : { secret }) };
      } catch (err) {
        if (!(err instanceof LostRace)) throw err;
      }
    }
    throw new AppError('ConcurrencyExhausted', `Processor ${name} keeps changing; try again`, { retryAfterSeconds: 1 });
  }

  /** A new secret for a webhook processor; the old one keeps signing pushes (alongside) for a day. */
  async rotateSecret(name: string): Promise<{ secret: string; previousUntil: number }> {
    const { deps } = this;
    for (let attempt = 0; attempt < 5; attempt++) {
      const existing = await deps.declared.read(name);
      if (existing === undefined) throw new AppError('NotFound', `No declared processor ${name}`);
      const { processor } = existing;
      if (processor.type !== 'webhook') throw new AppError('Conflict', `${name} is an external processor: it has no secret`);
      const now = deps.clock.now();
      const secret = newWebhookSecret();
      const previousUntil = now + secretOverlapMs;
      try {
        await deps.declared.write(
          { ...processor, secret, previousSecret: processor.secret, previousSecretUntil: previousUntil, updatedAt: now },
          existing.etag,
        );
        deps.logger.log('info', 'jobs.processor_secret_rotated', { processor: name });
        return { secret, previousUntil };
      } catch (err) {
        if (!(err instanceof LostRace)) throw err;
      }
    }
    throw new AppError('ConcurrencyExhausted', `Processor ${name} keeps changing; try again`, { retryAfterSeconds: 1 });
  }
}
