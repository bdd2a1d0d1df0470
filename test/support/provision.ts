/**
 * The storage a host starts on (the e2e harness's, the benches'), provisioned as a deployment's is:
 * the jobs queues its triggers listen on (work queues, their retry lanes, the poison queue of each,
 * hand-on and cancel) exist before it starts, as infra/ creates them (shared/resources.ts), here
 * for the host's own queue prefix and count. A fresh Azurite has none of them, and the real host's
 * listener on a missing queue polls it anyway: a 404 every poll, each logged as a 12-line
 * Azure.Core warning that the harness reads. Measured on the real host idle at 1 s polling (the
 * jobs files' setting), over a minute: the host 3.87 s of CPU with the queues missing, 2.75–2.80 s
 * with them; Azurite 2.93 s and 1.87–2.24 s — CPU that a CPU-bound suite pays in time. The queues
 * are empty, as the template's are.
 */
import { QueueServiceClient } from '@azure/storage-queue';

import { readGroup } from '../../shared/config';
import { cancelQueueName, deliveryQueueName, poisonQueueName, workLaneNames, workQueueNames } from '../../shared/jobs/queueNames';
import { jobSettings } from '../../shared/jobs/settings';

/** The jobs queues of an app with these settings, as infra/ provisions them for the defaults. */
export function jobQueuesOf(settings: Readonly<Record<string, string>>): string[] | undefined {
  let jobs;
  try {
    jobs = readGroup(jobSettings, settings);
  } catch {
    // Settings the app refuses: the host reports them itself, and there is nothing to provision.
    return undefined;
  }
  const listened = [...workQueueNames(jobs), ...workLaneNames(jobs)];
  return [...listened, ...listened.map(poisonQueueName), deliveryQueueName(jobs), cancelQueueName(jobs)];
}

/** Creates the jobs queues of a host with these settings on its storage (AzureWebJobsStorage). */
export async function provisionJobQueues(settings: Readonly<Record<string, string>>): Promise<void> {
  const names = jobQueuesOf(settings);
  const connection = settings.AzureWebJobsStorage;
  if (names === undefined || connection === undefined) return;
  const service = QueueServiceClient.fromConnectionString(connection);
  await Promise.all(names.map((name) => service.getQueueClient(name).createIfNotExists()));
}
