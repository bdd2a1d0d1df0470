// Every project: a wait still open when its test or file ends (a failure or jest's timeout came
// first) is given up with what it waited for and a report of what it saw (test/support/waits.ts).
import { abandonWaits } from '../waits';

afterEach(async () => {
  await abandonWaits('the test ended first (it failed, or reached jest’s timeout)');
});

afterAll(async () => {
  await abandonWaits('the test file ended first (a hook failed, or reached jest’s timeout)');
});
