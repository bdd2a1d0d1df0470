// The `e2e-real` projects run the same files on the real Functions host (test/e2e/support/harness.ts reads
// this), against the Azurite of their own that the projects' global setup started.
import { useRealHostStorage } from '../realHostPrepared';

process.env.E2E_HOST = 'real';
useRealHostStorage();
