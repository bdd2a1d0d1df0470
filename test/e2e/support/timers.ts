/**
 * The app's periodic timer triggers (every `*_SCHEDULE` setting the capabilities declare) set to
 * once a year. A virtual clock moved by hours steps through every due time, running each timer at
 * each of them (a two-second push timer is 5,400 steps in three hours), and tests of one capability
 * want no other background work. Read from the declarations, so a new timer is quiet here too.
 */
import { appSettings } from '../../../shared/app/settings';
import type { Setting } from '../../../shared/settings';

const yearly = '0 0 0 1 1 *';

export const periodicTimersOff: Readonly<Record<string, string>> = Object.fromEntries(
  Object.values(appSettings)
    .flatMap((group) => Object.values<Setting<unknown>>(group.settings))
    .filter((setting) => setting.env.endsWith('_SCHEDULE'))
    .map((setting) => [setting.env, yearly]),
);
