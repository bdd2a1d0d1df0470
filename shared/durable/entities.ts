/**
 * Durable entity names and ids, one way for every capability. An entity name is lower case, typed
 * so: the durable client lower-cases the name it addresses (`EntityId.getSchedulerIdFromEntityId`,
 * and the extension's `EntityId`), but an entity's own `context.df.signalEntity` sends it unchanged,
 * so `streamLedger` signalled from an entity and `streamledger` read by a client are two instances
 * (devhost/docs/real-host.md#entity-ids, azure-functions-durable-js#170). With names
 * that are lower case already, every caller reaches the same instance.
 */
import type { EntityId } from 'durable-functions';

/** A string with no upper-case letters (a literal such as `'streamLedger'` does not type-check). */
export type EntityName = Lowercase<string>;

export interface EntityRef {
  readonly name: EntityName;
  readonly key: string;
}

/** Defines an entity name; a name with upper-case letters fails to compile, or (from a variable) throws. */
export function entityName<const N extends EntityName>(name: N): N {
  if (name !== name.toLowerCase()) throw new Error(`Durable entity names must be lower case: ${name}`);
  return name;
}

/**
 * The entity id an orchestration or entity passes to `callEntity`/`signalEntity`. Structural,
 * because shared/ imports only durable-functions types; the library reads nothing but `name` and `key`.
 */
export function entityId(name: EntityName, key: string): EntityId & EntityRef {
  return { name, key, toString: () => `@${name}@${key}` };
}
