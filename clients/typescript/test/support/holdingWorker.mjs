// A worker process that takes one batch and holds it without completing, so a test can kill -9 it
// mid-batch. It uses the built client (clients/typescript/dist, from `npm run build`).
// argv: baseUrl processor; env: TALLYHO_FUNCTION_KEY. Prints `HOLDING <ids>` once it has a batch.
import { TallyhoClient } from '../../dist/index.js';

const [baseUrl, processor] = process.argv.slice(2);
const client = new TallyhoClient({ baseUrl, functionKey: process.env.TALLYHO_FUNCTION_KEY || undefined });
client.jobs.worker(
  processor,
  (items) => {
    process.stdout.write(`HOLDING ${items.map((i) => i.id).join(',')}\n`);
    return new Promise(() => undefined);
  },
  { waitSeconds: 5 },
);
