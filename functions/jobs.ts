/**
 * Jobs: one storage-queue trigger per work queue, one per poison queue, the reconciler timer (which
 * also purges jobs past their retention) and the pusher timer (webhook processors' batches; a timer
 * runs on one instance at a time, which is what makes a processor's concurrency limit app-wide).
 * Queue names and the schedule come from settings when the app loads (TALLYHO_JOBS_QUEUES,
 * TALLYHO_JOBS_QUEUE_PREFIX, TALLYHO_JOBS_RECONCILE_SCHEDULE); the logic lives in shared/jobs. Every
 * function that can complete a job gets a Durable client and offers it to the app, so the billing
 * processor can append its invoice lines through the streams capability.
 */
import { app, type InvocationContext } from '@azure/functions';
import * as df from 'durable-functions';

import { connectionNames } from '../shared/app/settings';
import { poisonQueueName, workQueueNames } from '../shared/jobs/envelopes/queues';
import { registration, theApp } from './_app';
import { durableClientOf } from './_durable';

const durableClient = [df.input.durableClient()];

/** The library hands a JSON message over parsed; the envelope is re-serialised to the text it was. */
function messageText(message: unknown): string {
  return typeof message === 'string' ? message : JSON.stringify(message);
}

function dequeueCount(context: InvocationContext): number {
  const count = context.triggerMetadata?.dequeueCount;
  return typeof count === 'number' ? count : Number(count ?? 1);
}

workQueueNames(registration.jobs).forEach((queueName, i) => {
  app.storageQueue(`jobsWork${i}`, {
    queueName,
    connection: connectionNames.storage,
    extraInputs: durableClient,
    handler: async (message, context) => {
      // A job this envelope completes appends its invoice lines through the app's Durable client source.
      theApp().durable.offer(durableClientOf(context));
      const report = await theApp().jobs.processEnvelope(messageText(message), { dequeueCount: dequeueCount(context) });
      if (report.jobFinished) context.log(JSON.stringify({ event: 'jobs.envelope_finished_job', ...report }));
    },
  });
  const poison = poisonQueueName(queueName);
  app.storageQueue(`jobsPoison${i}`, {
    queueName: poison,
    connection: connectionNames.storage,
    extraInputs: durableClient,
    handler: async (message, context) => {
      theApp().durable.offer(durableClientOf(context));
      await theApp().jobs.processPoison(messageText(message), poison);
    },
  });
});

app.timer('jobsReconcile', {
  schedule: registration.jobs.reconcileSchedule,
  extraInputs: durableClient,
  handler: async (_timer, context) => {
    theApp().durable.offer(durableClientOf(context));
    const report = await theApp().jobs.reconcile();
    if (report.visited > 0) context.log(JSON.stringify({ event: 'jobs.reconciled', ...report }));
    const purged = await theApp().jobs.purge();
    if (purged.purged > 0) context.log(JSON.stringify({ event: 'jobs.purged', ...purged }));
  },
});

app.timer('jobsPush', {
  schedule: registration.jobs.pushSchedule,
  handler: async (_timer, context) => {
    const report = await theApp().jobs.push(registration.jobs.pushRunSeconds * 1000);
    if (report.pushes > 0) context.log(JSON.stringify({ event: 'jobs.pushed', ...report }));
  },
});
