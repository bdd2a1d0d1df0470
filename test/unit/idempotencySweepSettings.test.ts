import { loadAppConfig } from '../../shared/app/settings';
import { readGroup } from '../../shared/config';
import { httpSettings } from '../../shared/http/settings';

const name = httpSettings.settings.idempotencySweepSchedule.env;
const idempotencySweepSchedule = (env: Record<string, string>): string => readGroup(httpSettings, env).idempotencySweepSchedule;

describe('TALLYHO_IDEMPOTENCY_SWEEP_SCHEDULE', () => {
  it('defaults to hourly and is part of the loaded config', () => {
    expect(idempotencySweepSchedule({})).toBe('0 0 * * * *');
    const config = loadAppConfig({
      AzureWebJobsStorage: 'UseDevelopmentStorage=true',
      [name]: '0 */10 * * * *',
    });
    expect(config.http.idempotencySweepSchedule).toBe('0 */10 * * * *');
  });

  it.each(['0 * * * *', 'every hour', '0 0 25 * * *'])('rejects %j naming the setting', (schedule) => {
    expect(() => idempotencySweepSchedule({ [name]: schedule })).toThrow(/TALLYHO_IDEMPOTENCY_SWEEP_SCHEDULE/);
  });
});
