/**
 * Which delivered messages a receiver has consumed, by the sender's outbox item id. A copy of an item
 * the receiver has consumed is dropped: on Azure Storage the receiver deletes a queue message once
 * its work item commits, so that copy no longer exists. A message a sender computes again (a batch or
 * episode that ran again after a crash) is a new item with a new id and is NOT dropped, as on Azure,
 * where nothing de-duplicates re-computed sends (devhost/docs/real-host.md#entity-delivery-after-a-crash).
 * A receipt is kept only while its sender could still resend the item (its stored outbox has it).
 */

/** Where a delivered outbox item came from: the sending instance and the item's id. */
export interface Origin {
  /** `@name@key` for an entity, `o:<instanceId>` for an orchestration. */
  readonly sender: string;
  readonly item: string;
}

/** Consumed outbox item ids per sender. */
export type Receipts = Readonly<Record<string, readonly string[]>>;

export function orchestrationSender(instanceId: string): string {
  return `o:${instanceId}`;
}

export function hasReceipt(receipts: Receipts, origin: Origin): boolean {
  return receipts[origin.sender]?.includes(origin.item) ?? false;
}

/** `receipts` plus `origins`, less every item its sender can no longer resend. */
export function withReceipts(
  receipts: Receipts,
  origins: readonly Origin[],
  mayResend: (sender: string, item: string) => boolean,
): Receipts {
  const next: Record<string, string[]> = {};
  const add = (sender: string, item: string): void => {
    if (!mayResend(sender, item)) return;
    const list = (next[sender] ??= []);
    if (!list.includes(item)) list.push(item);
  };
  for (const [sender, items] of Object.entries(receipts)) for (const item of items) add(sender, item);
  for (const o of origins) add(o.sender, o.item);
  return next;
}

/** A copy of an outbox item the receiver consumed (its receipt is stored) or holds already. */
export function consumedAlready(received: Receipts, waiting: readonly { readonly origin?: Origin }[], origin: Origin | undefined): boolean {
  if (origin === undefined) return false;
  return hasReceipt(received, origin) || waiting.some((w) => w.origin?.sender === origin.sender && w.origin.item === origin.item);
}

/** Records stored before receipts existed have none (they kept per-sender sequence marks instead). */
export function storedReceipts(record: { readonly received?: Receipts }): Receipts {
  return record.received ?? {};
}
