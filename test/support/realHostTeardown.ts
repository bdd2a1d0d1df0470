/** Global teardown of the `e2e-real` jest project. */
import { removeRealHostScratch } from './realHostSetup';

export default async function realHostTeardown(): Promise<void> {
  await removeRealHostScratch();
}
