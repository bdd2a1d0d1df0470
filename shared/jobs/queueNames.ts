/**
 * The name of every queue the jobs capability uses, from its settings (TALLYHO_JOBS_QUEUES,
 * TALLYHO_JOBS_QUEUE_PREFIX). Kept apart from the code that uses the queues, with no imports, so
 * whatever only needs the names (the functions' trigger declarations, infra and test provisioning)
 * loads nothing else. envelopes/queues.ts says how the queues are used.
 */

interface QueueSettings {
  readonly queues: number;
  readonly queuePrefix: string;
}

/** The work queues: `<prefix>-0` … `<prefix>-<K-1>`. */
export function workQueueNames(settings: QueueSettings): string[] {
  return Array.from({ length: settings.queues }, (_, i) => `${settings.queuePrefix}-${i}`);
}

/**
 * A retry lane: `<prefix>-r-<name>`, where `name` is a declared processor's (a letter first) or a
 * work queue's index (digits only), so the two kinds never share a lane.
 */
export function laneName(prefix: string, name: string): string {
  return `${prefix}-r-${name}`;
}

/** The work queues' retry lanes, in the order of `workQueueNames`. */
export function workLaneNames(settings: QueueSettings): string[] {
  return Array.from({ length: settings.queues }, (_, i) => laneName(settings.queuePrefix, String(i)));
}

export function poisonQueueName(workQueue: string): string {
  return `${workQueue}-poison`;
}

/** The queue of cancel requests: `<prefix>-c` (short, like the hand-on queue, so its `-poison` twin fits 63 characters). */
export function cancelQueueName(settings: Pick<QueueSettings, 'queuePrefix'>): string {
  return `${settings.queuePrefix}-c`;
}

/** The queue of hand-on requests: `<prefix>-d` (short, so its `-poison` twin fits 63 characters with the longest prefix). */
export function deliveryQueueName(settings: Pick<QueueSettings, 'queuePrefix'>): string {
  return `${settings.queuePrefix}-d`;
}
