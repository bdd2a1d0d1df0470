/**
 * The gate activities' work (functions/gates.ts only binds them). Making a release, performing
 * actions and a scheduled release are the service's and actionRunner.ts's; these are the rest:
 * finding whether a create or reset committed, announcing a change, and how a release's fan-out stands.
 */
import type { GateAuditLog } from './audit';
import type {
  AnnounceInput,
  AnnounceResult,
  FanOutState,
  FanOutStateInput,
  OpenedInput,
  OpenedResult,
  ReleaseConfirmed,
  ReleaseFollowUp,
} from './messages';
import type { GateEventPublisher } from './publisher';
import type { GateStore } from './store';
import { snapshotOf } from './transitions';
import type { GateWatchHub } from './watchHub';

export interface AnnounceDeps {
  readonly hub: GateWatchHub;
  readonly publisher: GateEventPublisher;
  /** Makes (or finds) the release to announce (the service's `confirmRelease`). */
  readonly confirmRelease: (input: ReleaseFollowUp) => Promise<ReleaseConfirmed>;
}

/** This process's long-poll/SSE clients, then the Service Bus topic (the audit row was written with the change). */
export async function announce(deps: AnnounceDeps, input: AnnounceInput): Promise<AnnounceResult> {
  deps.hub.publish(input.gate);
  return { published: await deps.publisher.publish(input) };
}

/** A release's announcement: the release first made (or found), then announced as it was made. */
export async function announceRelease(deps: AnnounceDeps, input: ReleaseFollowUp): Promise<AnnounceResult | undefined> {
  const confirmed = await deps.confirmRelease(input);
  if (confirmed.outcome !== 'released') return undefined;
  const { by, how, note } = confirmed.release;
  return announce(deps, { kind: 'release', gate: confirmed.gate, by, how, ...(note === undefined ? {} : { note }) });
}

export interface OpenedDeps {
  readonly audit: GateAuditLog;
  readonly store: GateStore;
}

/** Whether the generation was opened with the schedule the orchestration was started for, and the gate as it was then. */
export async function findOpened(deps: OpenedDeps, input: OpenedInput): Promise<OpenedResult> {
  const opened = await deps.audit.opened(input.gate, input.generation, input.kind, input.releaseAt);
  if (opened !== 'opened') return { opened };
  const stored = await deps.store.readGate(input.gate);
  if (stored === undefined) return { opened: 'absent' };
  const now = snapshotOf(stored.value);
  const gate =
    now.generation === input.generation
      ? now
      : { ...now, generation: input.generation, state: 'closed' as const, releaseAt: input.releaseAt, release: null };
  return { opened, gate };
}

/**
 * How the releasing instance's fan-out of a release stands (its lease row, fanOut.ts), counted on this
 * instance's clock: a lease past its end is `none`, as if never written (its instance stopped renewing).
 */
export async function fanOutState(
  deps: { readonly store: GateStore; readonly now: () => number },
  input: FanOutStateInput,
): Promise<FanOutState> {
  const lease = await deps.store.readFanOut(input.gate, input.generation);
  if (lease === undefined) return { state: 'none' };
  if (lease.state === 'ended') return { state: 'ended', clean: lease.clean };
  const left = Date.parse(lease.until) - deps.now();
  return left > 0 ? { state: 'running', seconds: Math.ceil(left / 1000) } : { state: 'none' };
}
