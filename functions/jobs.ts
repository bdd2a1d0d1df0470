/**
 * Jobs: HTTP registrations, one storage-queue trigger per work queue, one per poison queue, and the
 * reconciler timer. Queue names and the schedule come from settings when the app loads
 * (TALLYHO_JOBS_QUEUES, TALLYHO_JOBS_QUEUE_PREFIX, TALLYHO_JOBS_RECONCILE_SCHEDULE); the logic
 * lives in shared/jobs.
 */
import { app, type InvocationContext } from '@azure/functions';

import { jobSettings, settingNames } from '../shared/config';
import { getJobService } from '../shared/jobs/defaults';
import { poisonQueueName, workQueueNames } from '../shared/jobs/queues';
import { jobsRoutes } from '../shared/jobs/routes';
import { registerRoutes } from './_http';

const settings = jobSettings();

registerRoutes(jobsRoutes({ service: getJobService, maxRequestBytes: settings.maxRequestBytes }), {
  maxBodyBytes: settings.maxRequestBytes,
});

/** The library hands a JSON message over parsed; the envelope is re-serialised to the text it was. */
function messageText(message: unknown): string {
  return typeof message === 'string' ? message : JSON.stringify(message);
}

function dequeueCount(context: InvocationContext): number {
  const count = context.triggerMetadata?.dequeueCount;
  return typeof count === 'number' ? count : Number(count ?? 1);
}

workQueueNames(settings).forEach((queueName, i) => {
  app.storageQueue(`jobsWork${i}`, {
    queueName,
    connection: settingNames.storage,
    handler: async (message, context) => {
      const report = await getJobService().processEnvelope(messageText(message), { dequeueCount: dequeueCount(context) });
      if (report.jobFinished) context.log(JSON.stringify({ event: 'jobs.envelope_finished_job', ...report }));
    },
  });
  const poison = poisonQueueName(queueName);
  app.storageQueue(`jobsPoison${i}`, {
    queueName: poison,
    connection: settingNames.storage,
    handler: async (message) => {
      await getJobService().processPoison(messageText(message), poison);
    },
  });
});

app.timer('jobsReconcile', {
  schedule: settings.reconcileSchedule,
  handler: async (_timer, context) => {
    const report = await getJobService().reconcile();
    if (report.visited > 0) context.log(JSON.stringify({ event: 'jobs.reconciled', ...report }));
  },
});
