/**
 * Making a release: one place builds it from the gate row (the transition, its release row and audit
 * record) and commits it with If-Match on the row. Both the API's release (a command, after it started
 * the release orchestration) and the orchestration's first step (`confirmRelease`, which makes the
 * release unless the caller made it already) go through `commitRelease`, so a release is written,
 * published to this instance's watchers and counted the same way whoever makes it.
 */
import { type Logger, silentLogger } from '../log';
import { LostRace, retryLostRaces, type RetryContext } from '../retry';
import { noTelemetry, type Telemetry } from '../telemetry/port';
import { auditEntity } from './audit';
import type { ReleaseConfirmed, ReleaseFollowUp } from './messages';
import { gateTelemetry } from './metrics';
import type { GateRecord, GateSnapshot, ReleaseHow, ReleaseRecord } from './operations';
import type { GateRegistrar } from './registrar';
import { type FanOutLease, fanOutEntity, releaseEntity } from './rows';
import type { GateStore, Versioned } from './store';
import { release, snapshotOf } from './transitions';
import type { GateWatchHub } from './watchHub';

export interface ReleasesDeps {
  readonly store: GateStore;
  /** This app instance's one registrar: it forgets the gate row a release changed. */
  readonly registrar: GateRegistrar;
  readonly hub: GateWatchHub;
  readonly retry: (subject: string) => RetryContext;
  /** Where the capability's metrics and spans go (none when absent). */
  readonly telemetry?: Telemetry;
  /** Where a failed clean-up of released waiter counts is reported (the next release retries it). */
  readonly logger?: Logger;
}

/** Who released, how and when: the same for the API's release and the orchestration's. */
export interface ReleaseMaker {
  readonly at: string;
  readonly by: string;
  readonly how: ReleaseHow;
  readonly note?: string;
}

/** A release committed: the gate as it now is and the release row. */
interface Committed {
  readonly gate: GateSnapshot;
  readonly release: ReleaseRecord;
}

/** The gate as it was right after releasing `release` (for announcing a release the gate has since moved past). */
function releasedView(gate: GateRecord, release: ReleaseRecord): GateSnapshot {
  const current = snapshotOf(gate);
  if (gate.generation === release.generation) return current;
  const { from: _from, ...info } = release;
  return { ...current, generation: release.generation, state: 'released', releaseAt: null, release: info };
}

export class GateReleases {
  private readonly telemetry;

  constructor(private readonly deps: ReleasesDeps) {
    this.telemetry = (deps.telemetry ?? noTelemetry).of(gateTelemetry);
  }

  /** The release `maker` makes of the gate as `stored` holds it (closed, at its current generation): what `commitRelease` writes. */
  made(stored: Versioned<GateRecord>, maker: ReleaseMaker): Committed & { readonly record: GateRecord } {
    const { note } = maker;
    const made = release(stored.value, {
      generation: stored.value.generation,
      at: maker.at,
      by: maker.by,
      how: maker.how,
      ...(note === undefined ? {} : { note }),
    });
    if (made.result.outcome !== 'released' || made.record === undefined) throw new Error(`release answered ${made.result.outcome}`);
    return { record: made.record, gate: made.result.gate, release: made.result.release };
  }

  /**
   * Writes the release (the gate row if still at its ETag, the release row, the audit record); once
   * written, this instance's watchers hear of it and it is counted. Undefined when the gate changed
   * first (the registrar's copy of the row is dropped either way). `fanOut`: the caller fans the
   * actions out itself, and its lease on that (fanOut.ts) is written in the same transaction.
   */
  async commitRelease(
    name: string,
    stored: Versioned<GateRecord>,
    maker: ReleaseMaker,
    fanOut?: FanOutLease,
  ): Promise<Committed | undefined> {
    const made = this.made(stored, maker);
    const { at, by, how, note } = maker;
    const rows = [
      releaseEntity(name, made.release),
      auditEntity({
        gate: name,
        kind: 'release',
        generation: made.release.generation,
        at,
        how,
        by,
        ...(note === undefined ? {} : { note }),
      }),
    ];
    const lease = fanOut === undefined ? [] : [fanOutEntity(name, made.release.generation, fanOut)];
    const commit = await this.deps.store.commit(made.record, stored.etag, rows, lease);
    this.deps.registrar.forget(name);
    if (!commit.ok) return undefined;
    this.deps.hub.publish(made.gate);
    this.recordRelease(made.gate, how);
    void this.sweepHolds(name, made.release.from);
    return { gate: made.gate, release: made.release };
  }

  /**
   * The waiter counts of the runs a release let go are never read again: deleted after the release
   * is written, off its answer's path. Those of earlier releases go too, so an instance that
   * stopped before its clean-up leaves its rows only until the gate's next release.
   */
  private async sweepHolds(gate: string, from: number): Promise<void> {
    try {
      await this.deps.store.deleteReleasedHolds(gate, from);
    } catch (err) {
      (this.deps.logger ?? silentLogger).log('warn', 'gates.holds.sweepFailed', {
        gate,
        error: err instanceof Error ? err.message : String(err),
      });
    }
  }

  /**
   * The release orchestration's first step: makes the release it was started for, unless the caller
   * made it already (or the gate moved past that generation without it).
   */
  async confirmRelease(input: ReleaseFollowUp): Promise<ReleaseConfirmed> {
    return retryLostRaces(this.deps.retry(`gate ${input.gate}`), async () => {
      const stored = await this.deps.store.readGate(input.gate);
      if (stored === undefined) return { outcome: 'missing' };
      const gate = stored.value;
      if (gate.generation === input.generation && gate.state === 'closed') {
        const { at, by, how, note } = input;
        const committed = await this.commitRelease(input.gate, stored, { at, by, how, ...(note === undefined ? {} : { note }) });
        if (committed === undefined) throw new LostRace(`gate ${input.gate} changed`);
        return { outcome: 'released', gate: committed.gate, release: committed.release, actions: committed.release.actions };
      }
      const made = await this.deps.store.releaseFrom(input.gate, input.generation);
      if (made?.generation !== input.generation) return { outcome: 'superseded' };
      return { outcome: 'released', gate: releasedView(gate, made), release: made, actions: made.actions };
    });
  }

  /** A release made: counted with the runs it let go (all at once, none of them costs work of its own). */
  private recordRelease(gate: GateSnapshot, how: ReleaseHow): void {
    const { metrics } = this.telemetry;
    const name = { 'tallyho.gate.name': gate.name };
    metrics.releases.add(1, { ...name, 'tallyho.gate.release.how': how });
    metrics.released.record(gate.waiters.registered, name);
  }
}
