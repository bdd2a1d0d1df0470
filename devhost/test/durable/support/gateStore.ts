/**
 * A store wrapper that can hold chosen checkpoints forever: the engine above it behaves as if the
 * process died at that instant, and a second engine on the inner store plays the restart.
 */
import type { PendingEntityMessage, PendingOrchestrationEvent } from '../../../durable/records';
import type { DurableStore, EntityCheckpoint, LoadedState, OrchestrationCheckpoint } from '../../../durable/store';

export class GateStore implements DurableStore {
  readonly kind = 'memory';
  held = 0;

  constructor(
    private readonly inner: DurableStore,
    private readonly hold: { orchestration?: (c: OrchestrationCheckpoint) => boolean; entity?: (c: EntityCheckpoint) => boolean },
  ) {}

  private never(): Promise<void> {
    this.held++;
    return new Promise<void>(() => undefined);
  }

  load(): Promise<LoadedState> {
    return this.inner.load();
  }

  saveOrchestration(c: OrchestrationCheckpoint): Promise<void> {
    return this.hold.orchestration?.(c) === true ? this.never() : this.inner.saveOrchestration(c);
  }

  saveEntity(c: EntityCheckpoint): Promise<void> {
    return this.hold.entity?.(c) === true ? this.never() : this.inner.saveEntity(c);
  }

  enqueueOrchestrationEvent(instanceId: string, pending: PendingOrchestrationEvent): Promise<void> {
    return this.inner.enqueueOrchestrationEvent(instanceId, pending);
  }

  enqueueEntityMessage(entityId: string, pending: PendingEntityMessage): Promise<void> {
    return this.inner.enqueueEntityMessage(entityId, pending);
  }

  deleteOrchestration(instanceId: string): Promise<void> {
    return this.inner.deleteOrchestration(instanceId);
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
