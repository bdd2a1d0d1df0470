/**
 * Registering gated runs. A run is a row in the gate's partition, inserted in the same entity group
 * transaction as an If-Match replace of the gate row (which counts it): so a run is registered either
 * before the release (the release's own If-Match write then sees it counted, and lets it go) or after
 * (it is late, and carries the release) — never in between — and an exact limit holds on the waiting
 * runs however many instances register at once.
 *
 * Starts that arrive together are written together (group commit, one transaction in flight per
 * gate per instance): a thousand concurrent starts cost a few dozen transactions, not a thousand
 * contended ones. A run id already registered fails only its own insert; it is answered from the
 * stored row (the same action: the run that exists; another action: a conflict).
 */
import type { Clock } from '../clock';
import type { DurableClient } from '../durable/client';
import { GroupCommit } from '../groupCommit';
import { LostRace, retryLostRaces, type RetryContext } from '../retry';
import type { GateAction } from './actions';
import type { GateRecord } from './operations';
import { type NewRun, runEntity } from './rows';
import { type GateStore, maxTransactionOperations, type Versioned } from './store';
import { admit } from './transitions';
import { holderEntities, splitByShare, waiterShare } from './waiterShares';

export interface Registration {
  readonly runId: string;
  readonly action: GateAction;
  readonly fingerprint: string;
  /** Who starts it (a Caller id): the run and its job are theirs, and waiting runs are fair shares by it (./waiterShares.ts). */
  readonly holder: string;
  /** The run's owner (the same Caller id), recorded on the run. */
  readonly owner?: string;
}

export type RegistrationOutcome =
  | { readonly kind: 'created'; readonly generation: number; readonly late: boolean }
  /** Registered before, with the same action. */
  | { readonly kind: 'existing' }
  /** Registered before, with another action. */
  | { readonly kind: 'conflict' }
  | { readonly kind: 'full'; readonly generation: number; readonly limit: number }
  /** The caller already has `limit` runs waiting on this generation (its share). */
  | { readonly kind: 'overShare'; readonly generation: number; readonly limit: number }
  | { readonly kind: 'missing' };

export interface RegistrarDeps {
  readonly store: GateStore;
  readonly clock: Clock;
  readonly retry: (gate: string) => RetryContext;
  readonly maxWaiters: () => number;
  /**
   * Called before runs with an action are committed as late joiners (the gate is released), with the
   * Durable client of a request that registers one of them: makes sure something durable will perform
   * their actions once the commit lands (late.orchestrator.ts).
   */
  readonly beforeLateActions: (durable: DurableClient, gate: string, generation: number, runIds: readonly string[]) => Promise<void>;
}

interface Item {
  readonly registration: Registration;
  readonly actionJson: string;
  /** The Durable client of the request registering it. */
  readonly durable: DurableClient;
}

type Outcomes = Map<Item, RegistrationOutcome>;

/** Action JSON one transaction carries at most (the service takes 4 MiB per transaction). */
const maxTransactionChars = 3 * 1024 * 1024;
/** Gate rows kept for the next batch; a stale one costs one failed write and a read. */
const maxCachedGates = 1000;

export class GateRegistrar {
  private readonly commits: GroupCommit<Item, Outcomes>;
  private readonly cache = new Map<string, Versioned<GateRecord>>();

  constructor(private readonly deps: RegistrarDeps) {
    this.commits = new GroupCommit((gate, items) => this.write(gate, items), { maxInFlight: 1, maxItems: 1000 });
  }

  /** Registers a run; `durable` is the client of the request registering it (a late joiner's action is started on it). */
  async register(gate: string, registration: Registration, durable: DurableClient): Promise<RegistrationOutcome> {
    const item: Item = { registration, actionJson: JSON.stringify(registration.action), durable };
    const outcomes = await this.commits.submit(gate, item);
    const outcome = outcomes.get(item);
    if (outcome === undefined) throw new Error(`No registration outcome for run ${registration.runId}`);
    return outcome;
  }

  /** Forgets what this instance knows of a gate's row (after it changed it another way). */
  forget(gate: string): void {
    this.cache.delete(gate);
  }

  private async write(gate: string, items: readonly Item[]): Promise<Outcomes> {
    const outcomes: Outcomes = new Map();
    // One insert per run id; repeats within the batch are answered from the first.
    const first = new Map<string, Item>();
    const repeats: Item[] = [];
    for (const item of items) {
      if (first.has(item.registration.runId)) repeats.push(item);
      else first.set(item.registration.runId, item);
    }
    const existing: Item[] = [];
    let queue = [...first.values()];
    while (queue.length > 0) {
      const chunk = takeChunk(queue);
      const result = await this.commitChunk(gate, chunk, outcomes);
      if (result.existing !== undefined) {
        existing.push(result.existing);
        queue = queue.filter((item) => item !== result.existing);
      } else {
        queue = queue.slice(chunk.length);
      }
    }
    for (const item of existing) outcomes.set(item, await this.settleExisting(gate, item));
    // A refusal for room is only for a new run: a repeated start of a registered run answers as a repeat
    // (its own 202, or 409 for another action) however full the generation or the caller's share is.
    const refused = [...outcomes].filter(([, outcome]) => outcome.kind === 'full' || outcome.kind === 'overShare').map(([item]) => item);
    const registered = await Promise.all(refused.map((item) => this.asRepeat(gate, item)));
    refused.forEach((item, i) => {
      const repeat = registered[i];
      if (repeat !== undefined) outcomes.set(item, repeat);
    });
    for (const item of repeats) {
      const firstItem = first.get(item.registration.runId) as Item;
      const firstOutcome = outcomes.get(firstItem) as RegistrationOutcome;
      const same = item.registration.fingerprint === firstItem.registration.fingerprint;
      outcomes.set(
        item,
        firstOutcome.kind === 'created' || firstOutcome.kind === 'existing'
          ? same
            ? { kind: 'existing' }
            : { kind: 'conflict' }
          : firstOutcome,
      );
    }
    return outcomes;
  }

  /**
   * Commits one chunk against the current gate row, retrying when the row changed underneath. Sets
   * the outcomes of the chunk's items, except one whose run exists already: that one is returned.
   */
  private commitChunk(gate: string, chunk: readonly Item[], outcomes: Outcomes): Promise<{ existing?: Item }> {
    return retryLostRaces(this.deps.retry(gate), async () => {
      const cached = this.cache.get(gate);
      const current = cached ?? (await this.deps.store.readGate(gate));
      if (current === undefined) {
        for (const item of chunk) outcomes.set(item, { kind: 'missing' });
        return {};
      }
      // Runs that would wait are first split by their caller's share; late joiners take no place.
      const waits = current.value.state === 'closed';
      const held = waits
        ? await this.deps.store.readHeld(gate, current.value.openSince, [...new Set(chunk.map(holderOf))])
        : new Map<string, number>();
      const share = waiterShare(this.deps.maxWaiters());
      const { within, over } = waits ? splitByShare(chunk, holderOf, held, share) : { within: chunk, over: [] };
      const withAction = within.map((item) => item.registration.action.type !== 'none');
      const transition = admit(current.value, { withAction, maxWaiters: this.deps.maxWaiters() });
      const decided = transition.result;
      if (decided.outcome === 'missing' || transition.record === undefined) throw new Error('admit lost an existing gate');
      if (cached !== undefined && (decided.accepted < within.length || over.length > 0)) {
        // A refusal is not checked by a write: make sure the gate is still that full (a release elsewhere empties it).
        this.cache.delete(gate);
        throw new LostRace(`gate ${gate} may have changed`);
      }
      const accepted = within.slice(0, decided.accepted);
      const late = decided.outcome === 'late';
      for (const item of within.slice(decided.accepted))
        outcomes.set(item, { kind: 'full', generation: decided.generation, limit: this.deps.maxWaiters() });
      for (const item of over) outcomes.set(item, { kind: 'overShare', generation: decided.generation, limit: share });
      if (accepted.length === 0) return {};
      if (late) {
        const withActions = accepted.filter((item) => item.registration.action.type !== 'none');
        const first = withActions[0];
        if (first !== undefined)
          await this.deps.beforeLateActions(
            first.durable,
            gate,
            decided.generation,
            withActions.map((item) => item.registration.runId),
          );
      }
      const registeredAt = new Date(this.deps.clock.now()).toISOString();
      const rows = accepted.map((item) => runEntity(newRun(gate, item, decided.generation, late, registeredAt)));
      const counts = waits ? holderEntities(gate, current.value.openSince, accepted, holderOf, held) : [];
      const commit = await this.deps.store.commit(transition.record, current.etag, rows, counts);
      if (!commit.ok && commit.reason === 'stale') {
        this.cache.delete(gate);
        throw new LostRace(`gate ${gate} changed`);
      }
      if (!commit.ok) {
        // Nothing was written; the cached row is still current. The rest go again without this one.
        for (const item of chunk) outcomes.delete(item);
        return { existing: accepted[commit.index] as Item };
      }
      this.remember(gate, { value: transition.record, etag: commit.etag });
      for (const item of accepted) outcomes.set(item, { kind: 'created', generation: decided.generation, late });
      return {};
    });
  }

  private async settleExisting(gate: string, item: Item): Promise<RegistrationOutcome> {
    // Registered, so it exists unless it was deleted since (runs are not): treat a vanished row as a conflict.
    return (await this.asRepeat(gate, item)) ?? { kind: 'conflict' };
  }

  /** The answer to a start of a run id that is registered already (undefined when it is not). */
  private async asRepeat(gate: string, item: Item): Promise<RegistrationOutcome | undefined> {
    const stored = await this.deps.store.readRun(gate, item.registration.runId);
    if (stored === undefined) return undefined;
    return stored.value.fingerprint === item.registration.fingerprint ? { kind: 'existing' } : { kind: 'conflict' };
  }

  private remember(gate: string, row: Versioned<GateRecord>): void {
    this.cache.delete(gate);
    if (this.cache.size >= maxCachedGates) this.cache.delete(this.cache.keys().next().value as string);
    this.cache.set(gate, row);
  }
}

/** The first items of `queue` that fit one transaction (with the gate row): by count and by size. */
function takeChunk(queue: readonly Item[]): Item[] {
  const chunk: Item[] = [];
  const holders = new Set<string>();
  let chars = 0;
  for (const item of queue) {
    // The gate row, a row per run and a count row per caller.
    if (1 + chunk.length + holders.size + (holders.has(holderOf(item)) ? 0 : 1) >= maxTransactionOperations) break;
    if (chunk.length > 0 && chars + item.actionJson.length > maxTransactionChars) break;
    chunk.push(item);
    holders.add(holderOf(item));
    chars += item.actionJson.length;
  }
  return chunk;
}

const holderOf = (item: Item): string => item.registration.holder;

function newRun(gate: string, item: Item, generation: number, late: boolean, registeredAt: string): NewRun {
  const { runId, action, fingerprint, owner } = item.registration;
  return {
    gate,
    runId,
    generation,
    late,
    registeredAt,
    fingerprint,
    actionType: action.type,
    ...(owner === undefined ? {} : { owner }),
    actionJson: item.actionJson,
  };
}
