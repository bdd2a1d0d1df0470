import { idempotencySweepSchedule, loadConfig, settingNames } from '../../shared/config';

describe('TALLYHO_IDEMPOTENCY_SWEEP_SCHEDULE', () => {
  it('defaults to hourly and is part of the loaded config', () => {
    expect(idempotencySweepSchedule({})).toBe('0 0 * * * *');
    const config = loadConfig({
      AzureWebJobsStorage: 'UseDevelopmentStorage=true',
      [settingNames.idempotencySweepSchedule]: '0 */10 * * * *',
    });
    expect(config.http.idempotencySweepSchedule).toBe('0 */10 * * * *');
  });

  it.each(['0 * * * *', 'every hour', '0 0 25 * * *'])('rejects %j naming the setting', (schedule) => {
    expect(() => idempotencySweepSchedule({ [settingNames.idempotencySweepSchedule]: schedule })).toThrow(
      /TALLYHO_IDEMPOTENCY_SWEEP_SCHEDULE/,
    );
  });
});
