/** Global teardown of the `e2e-real` jest project. */
import { removeRealHostScratch } from './realHostSetup';

export default function realHostTeardown(): void {
  removeRealHostScratch();
}
