/** Counters: the rollup timer; the logic lives in shared/counters. */
import { app } from '@azure/functions';

import { registration, theApp } from './_app';

app.timer('countersRollup', {
  // Read when the app loads (the host needs the schedule to index the function); validated there.
  schedule: registration.counters.rollupSchedule,
  handler: async (timer, context) => {
    const report = await theApp().counters.runRollup();
    if (report.partitions > 0 || timer.isPastDue)
      context.log(JSON.stringify({ event: 'counter.rollup_run', isPastDue: timer.isPastDue, ...report }));
  },
});
