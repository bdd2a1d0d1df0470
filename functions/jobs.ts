/**
 * Jobs: HTTP registrations, one storage-queue trigger per work queue, one per poison queue, and the
 * reconciler timer. Queue names and the schedule come from settings when the app loads
 * (TALLYHO_JOBS_QUEUES, TALLYHO_JOBS_QUEUE_PREFIX, TALLYHO_JOBS_RECONCILE_SCHEDULE); the logic
 * lives in shared/jobs. Every function that can complete a job gets a Durable client, so the
 * billing processor can append its invoice lines through the streams capability.
 */
import { app, type InvocationContext } from '@azure/functions';
import * as df from 'durable-functions';

import { jobSettings, settingNames } from '../shared/config';
import { getJobService, useStreamsForJobs } from '../shared/jobs/defaults';
import { poisonQueueName, workQueueNames } from '../shared/jobs/queues';
import { jobsRoutes } from '../shared/jobs/routes';
import { getStreamService } from '../shared/streams/defaults';
import { streamsApi } from '../shared/streams/service';
import { durableClientOf, latestDurableClient, withDurableClient } from './_durable';
import { registerRoutes } from './_http';

const settings = jobSettings();
const durableClient = [df.input.durableClient()];

// A Durable client's binding data is the same for every invocation, so the newest one serves.
useStreamsForJobs(() => streamsApi(getStreamService(), latestDurableClient()));

const routes = jobsRoutes({ service: getJobService, maxRequestBytes: settings.maxRequestBytes });
registerRoutes(
  routes.filter((r) => r.name !== 'jobsRetryFailed'),
  { maxBodyBytes: settings.maxRequestBytes },
);
// Retry-failed may first hand on the last completion's output, which needs the streams client.
registerRoutes(
  routes.filter((r) => r.name === 'jobsRetryFailed'),
  withDurableClient,
);

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
    extraInputs: durableClient,
    handler: async (message, context) => {
      durableClientOf(context);
      const report = await getJobService().processEnvelope(messageText(message), { dequeueCount: dequeueCount(context) });
      if (report.jobFinished) context.log(JSON.stringify({ event: 'jobs.envelope_finished_job', ...report }));
    },
  });
  const poison = poisonQueueName(queueName);
  app.storageQueue(`jobsPoison${i}`, {
    queueName: poison,
    connection: settingNames.storage,
    extraInputs: durableClient,
    handler: async (message, context) => {
      durableClientOf(context);
      await getJobService().processPoison(messageText(message), poison);
    },
  });
});

app.timer('jobsReconcile', {
  schedule: settings.reconcileSchedule,
  extraInputs: durableClient,
  handler: async (_timer, context) => {
    durableClientOf(context);
    const report = await getJobService().reconcile();
    if (report.visited > 0) context.log(JSON.stringify({ event: 'jobs.reconciled', ...report }));
  },
});
