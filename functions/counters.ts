/** Counters: HTTP registrations and the rollup timer; the logic lives in shared/counters. */
import { app } from '@azure/functions';

import { counterSettings } from '../shared/config';
import { getCounterService } from '../shared/counters/defaults';
import { countersRoutes } from '../shared/counters/routes';
import { registerRoutes } from './_http';

registerRoutes(countersRoutes({ service: getCounterService }));

app.timer('countersRollup', {
  // Read when the app loads (the host needs the schedule to index the function); validated there.
  schedule: counterSettings().rollupSchedule,
  handler: async (timer, context) => {
    const report = await getCounterService().runRollup();
    if (report.partitions > 0 || timer.isPastDue)
      context.log(JSON.stringify({ event: 'counter.rollup_run', isPastDue: timer.isPastDue, ...report }));
  },
});
