/** The timer that deletes expired Idempotency-Key rows; the logic lives in shared/idempotencySweep. */
import { app } from '@azure/functions';

import { idempotencySweepSchedule } from '../shared/config';
import { runIdempotencySweep } from '../shared/idempotencySweep';

app.timer('idempotencySweep', {
  // Read when the app loads (the host needs the schedule to index the function); validated there.
  schedule: idempotencySweepSchedule(),
  handler: async () => {
    await runIdempotencySweep();
  },
});
