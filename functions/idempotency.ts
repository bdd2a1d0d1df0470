/** The timer that deletes expired Idempotency-Key rows; the logic lives in shared/idempotencySweep. */
import { app } from '@azure/functions';

import { registration, theApp } from './_app';

app.timer('idempotencySweep', {
  // Read when the app loads (the host needs the schedule to index the function); validated there.
  schedule: registration.http.idempotencySweepSchedule,
  handler: async () => {
    await theApp().sweepIdempotency();
  },
});
