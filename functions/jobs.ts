/**
 * Jobs: one storage-queue trigger per work queue and per its retry lane, one per poison queue, the hand-on trigger (a
 * completed job's processor step that needs a Durable client: billing's invoice ledger appends to a
 * stream), the cancel trigger (a cancel's background step: the job's open items recorded `cancelled`), the reconciler timer (which also purges jobs past their retention) and the pusher timer
 * (webhook processors' batches; a timer runs on one instance at a time, which is what makes a
 * processor's concurrency limit app-wide). Queue names and the schedule come from settings when the
 * app loads (TALLYHO_JOBS_QUEUES, TALLYHO_JOBS_QUEUE_PREFIX, TALLYHO_JOBS_RECONCILE_SCHEDULE); the
 * logic lives in shared/jobs. Only the hand-on trigger declares a Durable client: it is the one
 * invocation whose work needs one.
 */
import { app, type InvocationContext } from '@azure/functions';
import * as df from 'durable-functions';

import { connectionNames } from '../shared/app/settings';
import { cancelQueueName, deliveryQueueName, poisonQueueName, workLaneNames, workQueueNames } from '../shared/jobs';
import { registration, theApp } from './_app';
import { durableClientOf } from './_durable';

/** The library hands a JSON message over parsed; the envelope is re-serialised to the text it was. */
function messageText(message: unknown): string {
  return typeof message === 'string' ? message : JSON.stringify(message);
}

function dequeueCount(context: InvocationContext): number {
  const count = context.triggerMetadata?.dequeueCount;
  return typeof count === 'number' ? count : Number(count ?? 1);
}

/**
 * A work queue's (or its retry lane's) trigger, and the trigger of its poison queue. A work queue's
 * message that fails moves to `lane` (shared/jobs/delivery/workQueues.ts); a lane's has none.
 */
function workTriggers(name: string, poisonName: string, queueName: string, lane?: string): void {
  app.storageQueue(name, {
    queueName,
    connection: connectionNames.storage,
    handler: async (message, context) => {
      const delivery = { dequeueCount: dequeueCount(context), ...(lane === undefined ? {} : { lane }) };
      const report = await theApp().jobs.work.onMessage(messageText(message), delivery);
      if ('jobFinished' in report && report.jobFinished) context.log(JSON.stringify({ event: 'jobs.envelope_finished_job', ...report }));
    },
  });
  const poison = poisonQueueName(queueName);
  app.storageQueue(poisonName, {
    queueName: poison,
    connection: connectionNames.storage,
    handler: async (message) => {
      await theApp().jobs.work.onPoison(messageText(message), poison);
    },
  });
}

// Each lane has a listener of its own, so a retry is read within one poll interval however long its work queue's backlog is.
const lanes = workLaneNames(registration.jobs);
workQueueNames(registration.jobs).forEach((queueName, i) => {
  workTriggers(`jobsWork${i}`, `jobsPoison${i}`, queueName, lanes[i]);
  workTriggers(`jobsRetry${i}`, `jobsRetryPoison${i}`, lanes[i] as string);
});

app.storageQueue('jobsDeliver', {
  queueName: deliveryQueueName(registration.jobs),
  connection: connectionNames.storage,
  extraInputs: [df.input.durableClient()],
  handler: async (message, context) => {
    await theApp().jobs.outputs.onDeliveryRequest(messageText(message), durableClientOf(context));
  },
});

app.storageQueue('jobsCancelItems', {
  queueName: cancelQueueName(registration.jobs),
  connection: connectionNames.storage,
  handler: async (message, context) => {
    const report = await theApp().jobs.cancels.onRequest(messageText(message));
    if (report.cancelled > 0) context.log(JSON.stringify({ event: 'jobs.cancel_finished', ...report }));
  },
});

app.timer('jobsReconcile', {
  schedule: registration.jobs.reconcileSchedule,
  handler: async (_timer, context) => {
    const report = await theApp().jobs.upkeep.reconcile();
    if (report.visited > 0) context.log(JSON.stringify({ event: 'jobs.reconciled', ...report }));
    const purged = await theApp().jobs.upkeep.purge();
    if (purged.purged > 0) context.log(JSON.stringify({ event: 'jobs.purged', ...purged }));
  },
});

app.timer('jobsPush', {
  schedule: registration.jobs.pushSchedule,
  handler: async (_timer, context) => {
    const report = await theApp().jobs.upkeep.push(registration.jobs.pushRunSeconds * 1000);
    if (report.pushes > 0) context.log(JSON.stringify({ event: 'jobs.pushed', ...report }));
  },
});
